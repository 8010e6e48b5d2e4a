#!/usr/bin/env node
// cyclemarket. The package ships TypeScript sources without a build, so this entry registers
// the tsx loader and then runs src/cli/main.ts.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));

#!/usr/bin/env node
// cyclemarket-worker. The package ships TypeScript sources without a build, so this entry
// registers the tsx loader and then runs src/node/cli.ts.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/node/cli.ts");
process.exitCode = await main(process.argv.slice(2));

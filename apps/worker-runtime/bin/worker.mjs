#!/usr/bin/env node
// cyclemarket-worker. The package ships TypeScript sources without a build, so this entry
// registers the tsx loader and then runs src/node/cli.ts. The sandbox threads run a bundle
// instead (scripts/build-thread.mjs): it is rebuilt here first if a source changed since
// install, so the CLI never runs threads older than its own code.
import { register } from "tsx/esm/api";
import { buildThread } from "../scripts/build-thread.mjs";

await buildThread();
register();
const { main } = await import("../src/node/cli.ts");
process.exitCode = await main(process.argv.slice(2));

// The worker CLI's entry, bundled to dist/cli/worker.mjs (scripts/build-thread.mjs) and run by
// bin/worker.mjs: plain JavaScript, no TypeScript loader.
import { main } from "./cli.ts";

process.exitCode = await main(process.argv.slice(2));

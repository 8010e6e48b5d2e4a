#!/usr/bin/env node
// cyclemarket: the CLI bundled to plain JavaScript (scripts/build.mjs, run by `npm install`).
import { existsSync } from "node:fs";

const cli = new URL("../dist/lib/cli.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("cyclemarket is not built: run `npm run build -w @cyclemarket/client` in the repository (npm install does it).\n");
  process.exit(2);
}
const { main } = await import(cli.href);
process.exitCode = await main(process.argv.slice(2));

#!/usr/bin/env node
// cyclemarket-worker. Runs the CLI built by scripts/build-thread.mjs (dist/cli/worker.mjs, plain
// JavaScript: no TypeScript loader starts). The built files are first brought up to date if a
// source changed since they were built (a few file stats; esbuild loads only then), so the CLI
// and its threads never run older code than the checkout's.
import { buildThread } from "../scripts/build-thread.mjs";

await buildThread();
await import("../dist/cli/worker.mjs");

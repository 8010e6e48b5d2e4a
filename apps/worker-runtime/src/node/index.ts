// Node-only parts of the worker runtime: the worker_threads pool, the tRPC adapter and the CLI.
export { createNodePool } from "./pool.ts";
export type { NodePoolOptions } from "./pool.ts";
export { createTrpcApi } from "./trpc-api.ts";
export { main as runWorkerCli, parseCommand } from "./cli.ts";

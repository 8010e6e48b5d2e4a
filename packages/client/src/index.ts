// @cyclemarket/client: the job file format, the SDK and the CLI. Browsers import the job file
// alone from "@cyclemarket/client/job-file" (no Node built-ins there).
export * from "./job-file/index.ts";
export { CycleMarket, connect, call, type ConnectOptions, type JobSource } from "./sdk/market.ts";
export { JobHandle, FINAL_STATUSES, isFinal, type JobView, type Decision, type Cancelled, type Progress, type TaskOutput, type AbortSignalLike } from "./sdk/job.ts";
export type { Quote } from "./sdk/wire.ts";
export { MarketError, marketError } from "./sdk/errors.ts";
export { loadJobFile, parseJobFile, diskReader, type LoadedJobFile } from "./sdk/load.ts";
export { main as cli, EXIT } from "./cli/main.ts";

// @cyclemarket/worker-runtime: everything here runs in browsers and in Node alike.
// Node-only parts (the worker_threads pool, the CLI, the tRPC adapter) are in "./node";
// the browser pool is in "./browser".
export { runTask, compileTaskModule, sha256Hex, failedOutcome, PROGRAM_NAME, STDERR_LIMIT_BYTES, EMPTY_OUTPUT_HASH } from "./sandbox.ts";
export type { RunTaskInput, TaskLimits, TaskOutcome, SandboxError, SandboxErrorCode } from "./sandbox.ts";
export { validateModule, describeModuleRefusal, ALLOWED_WASI_IMPORTS, WASI_MODULE } from "./validate.ts";
export type { ModuleLimits, ModuleInfo, ModuleRefusal, ModuleValidation } from "./validate.ts";
export { VIRTUAL_EPOCH_NS, VIRTUAL_TICK_NS, ROOT_PREOPEN } from "./wasi-host.ts";
export { checkTaskFiles, checkTaskFilePath, checkTaskEnv, describeTaskInputRefusal, MAX_PATH_BYTES, MAX_NAME_BYTES } from "./task-inputs.ts";
export type { TaskInputRefusal } from "./task-inputs.ts";
export { PAGE_BYTES } from "./wasm-binary.ts";
export {
  EXAMPLES,
  ExampleName,
  MonteCarloParams,
  PrimesParams,
  MandelbrotParams,
  combineExample,
  planExample,
  mandelbrotRgba,
} from "./examples.ts";
export type { ExampleJob, ExampleResult, MonteCarloResult, PrimesResult, MandelbrotResult } from "./examples.ts";
export { runBenchmark, REFERENCE_KERNEL_RATE } from "./benchmark.ts";
export type { BenchmarkResult, BenchmarkOptions } from "./benchmark.ts";
export { toBase64, fromBase64 } from "./base64.ts";
export type { Executor, ExecuteRequest, ExecutorLimits } from "./executor.ts";
export { ThreadPool } from "./thread-pool.ts";
export type { SandboxThread, SpawnThread, ThreadEvents } from "./thread-pool.ts";
export { nameText, storableText } from "./text.ts";
export * as messages from "./messages.ts";
export {
  MachineKind,
  RegisterRequest,
  RegisterResponse,
  LeaseRequest,
  LeaseLimits,
  Lease,
  LeaseResponse,
  ModuleRequest,
  ModuleResponse,
  HeartbeatRequest,
  HeartbeatResponse,
  TaskErrorCode,
  ReportRequest,
  ReportResponse,
  ReportAndLeaseRequest,
  ReportAndLeaseResponse,
  ReportManyRequest,
  ReportManyResponse,
  REPORTS_PER_CALL,
  DepartRequest,
  WorkStreamRequest,
  WorkOffer,
  OfferRequest,
  OfferResponse,
  WhereIsRequest,
  WhereIsResponse,
  ManagersResponse,
  WORKER_PROCEDURES,
  MIN_SPEED,
  MAX_SPEED,
  MIN_PRICE,
  MAX_PRICE_PER_SECOND,
  MAX_CONTRACT_PRICE,
  MIN_BANDWIDTH,
  MAX_BANDWIDTH,
} from "./api.ts";
export { MachineControls, MachineControlsPatch, HandBack, DEFAULT_CONTROLS, readControls, offReason } from "./controls/machine-controls.ts";
export type { MachineControlsInput, LocalConditions, OffReason } from "./controls/machine-controls.ts";
export { parseSchedule, inSchedule, minutesToNextChange, MAX_SCHEDULE_CHARS } from "./controls/schedule.ts";
export { restAfterMs, dutyCycle, offeredSpeed } from "./controls/duty-cycle.ts";
export type { WorkerApi, WorkerProcedure, WorkStreamHandlers } from "./api.ts";
export { workStreamCallbacks } from "./work-stream.ts";
export type { WorkSubscriptionCallbacks } from "./work-stream.ts";
export { runProducer } from "./producer.ts";
export { SlotShare } from "./slot-share.ts";
export type { ProducerEvent, ProducerOptions, ProducerSummary, ProducerStage, MachineProfile } from "./producer.ts";

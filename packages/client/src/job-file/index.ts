// The job file and the request the API takes: schemas, limits, checks and words. Safe in
// browsers (no Node built-ins), so the web form and the Market Manager use exactly these.
export { JOB_LIMITS, DEFAULT_TASK_LIMITS } from "./limits.ts";
export { sandboxPathProblem, MAX_PATH_CHARS, type PathProblem } from "./sandbox-path.ts";
export { toBase64, fromBase64, base64Bytes } from "./base64.ts";
export { Sha256Hex, EnvName, TaskLimits, TaskRequest, ModuleSource, JobRequest, WorkPerTask, MaxSpend } from "./job-request.ts";
export { FromFile, Base64Bytes, JobModule, Stdin, InputFiles, ListedTask, CountedTasks, PerLineTasks, JobTasks, JobFile, checkJobFile, jobFileIssueWords, type JobFileInput, type JobFileIssue } from "./job-file.ts";
export { checkJobRequest, type JobRefusal } from "./refusal.ts";
export { listTasks, taskRequest, jobRequest, modulePath, cachedReader, JobFileProblem, type ReadFile, type JobFileReason } from "./expand.ts";
export { describeJobReason, jobReasonWords } from "./words.ts";
export { shortId, SHORT_ID_LENGTH } from "./short-id.ts";
export type { Reason, ClientReason, ClientReasonCode } from "./reason.ts";

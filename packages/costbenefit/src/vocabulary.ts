// The market's whole vocabulary: every reason and refusal it can give, as data (a code and the
// numbers behind it). The engine's reasons (reasons.ts) and charges (settlement.ts) are one part; the others are what the
// Market Manager says of its own (limits, ledger, leases, replicas, settlement), of job files and
// module uploads, and of failed runs. The API validates against it, the SDK and CLI read it, and
// the web app keys its sentences by `MarketReasonCode`, so a code without words does not compile.
// Instants are milliseconds since the epoch on the wire; durations carry their unit in their name.
import { z } from "zod";
import { OfferRefusal, Reason } from "./reasons.ts";
import { ChargeReason } from "./settlement.ts";

const num = z.number();
const str = z.string();
// Strict: a field no schema declares is refused, so a renamed field fails at the API's edge as well as in the type check.
const reason = <C extends string, S extends z.ZodRawShape>(code: C, shape: S) => z.object({ code: z.literal(code), ...shape }).strict();

/** The market's limits, as the README's table names them; a `limit-reached` refusal names one. */
export const LimitName = z.enum([
  "quotes-per-minute",
  "submissions-per-minute",
  "queued-tasks-per-user",
  "streams-per-machine",
  "streams-per-user",
  "calls-per-batch",
  "sign-ins-per-minute",
  "sign-ups-per-minute",
  "password-changes-per-minute",
  "verification-emails-per-minute",
  "password-resets-per-minute",
  "auth-requests-per-minute",
  "auth-body-bytes",
]);
export type LimitName = z.infer<typeof LimitName>;

/** How a run failed in the sandbox (a `task-failed` reason's `cause`). */
export const SandboxFailure = z.enum(["trap", "timeout", "output-limit", "memory-limit", "invalid-module", "crashed", "aborted", "nonzero-exit", "no-quorum"]);
export type SandboxFailure = z.infer<typeof SandboxFailure>;

/** A failed run as the market records it: the sandbox's failure, or the program's exit code (`exit:3`). */
export const RunFailure = z.union([SandboxFailure, z.templateLiteral(["exit:", z.number().int()])]);
export type RunFailure = z.infer<typeof RunFailure>;

/** What the Market Manager refuses or records by its own rules (the engine decides the rest). */
export const ServiceReason = z.discriminatedUnion("code", [
  // Requests and limits.
  reason("invalid-input", { issues: z.array(z.object({ path: z.array(str), message: str })) }),
  reason("internal-error", { requestId: str.nullable() }),
  // The database could not be reached: not a fault of the request; pages say they are reconnecting.
  reason("database-unavailable", { requestId: str.nullable() }),
  // A queued-tasks refusal says how many wait and how many the job adds; an account route's, its window.
  reason("limit-reached", { limit: LimitName, max: num, retryAfterSeconds: num, queued: num.optional(), adding: num.optional(), windowSeconds: num.optional() }),
  reason("batch-too-large", { limit: z.literal("calls-per-batch"), max: num, calls: num }),
  reason("body-too-large", { limit: LimitName, max: num }),
  reason("request-too-large", { bytes: num, maxBytes: num }),
  reason("too-many-signups", { scope: z.enum(["address", "network"]), limit: num, windowMinutes: num, retryAfterSeconds: num }),
  reason("not-found", { what: str }),
  reason("market-busy", { limit: z.literal("queued-calls"), max: num, retryAfterSeconds: num }),
  reason("client-gone", {}),
  reason("already-verified", {}),
  // Tokens.
  reason("token-scope", { needed: str, scopes: z.array(str) }),
  reason("token-cannot-mint", {}),
  reason("scope-needs-role", { scope: str, role: str }),
  // Money.
  // `account` names whose balance fell short (a consumer's unless said); a quote adds the price it
  // would charge and what is missing beside what escrow needs.
  reason("insufficient-credits", {
    needed: num,
    balance: num.optional(),
    account: z.enum(["consumer", "producer", "market", "escrow"]).optional(),
    price: num.optional(),
    missing: num.optional(),
  }),
  reason("no-earnings-to-move", {}),
  reason("not-a-consumer", { email: str }),
  reason("escrow-exhausted", { escrow: num, paidToProducers: num, taskIndex: num }),
  // Jobs and replicas.
  reason("job-finished", { status: str }),
  reason("bad-example-params", {}),
  reason("needs-more-machines", { replicas: num, machinesConnected: num, ownersConnected: num }),
  // `copiesOnMachines`: the copies whose owners it may not use, and whether each ran or is running.
  reason("needs-another-machine", {
    taskIndex: num,
    copy: num,
    copiesOnMachines: z.array(z.object({ copy: num, state: z.enum(["pending", "queued", "leased", "done", "failed"]) }).strict()),
    machinesConnected: num,
    ownersConnected: num,
  }),
  // `cause`: the last run's failure, or the job's limit of reproduced failures; `stderr` its first characters.
  // Tasks no connected machine may lease: the cheapest asks more for one (`cheapestPiece`) than
  // the job's escrow has `left` beyond what it paid, holds and promised.
  reason("budget-short", { tasks: num, left: num, cheapestPiece: num, machinesConnected: num }),
  reason("task-failed", {
    taskIndex: num,
    attempts: num,
    cause: z.union([RunFailure, z.literal("failure-limit")]).nullable().optional(),
    exitCode: num.nullable().optional(),
    stderr: str.optional(),
  }),
  reason("no-quorum", {}),
  // A job without a work estimate whose remainder the engine did not admit after its pilots ran.
  reason("remainder-rejected", { pilots: num, tasks: num, paidToProducers: num }),
  // Machines and their reports.
  reason("implausible-speed", { speed: num, min: num, max: num }),
  reason("negative-price", { price: num }),
  reason("incomplete-offer", {}),
  reason("dedicated-offered-to-several", {}),
  reason("offer-in-the-past", { departsAt: num, now: num }),
  reason("offer-too-long", { days: num, maxDays: num }),
  // The engine's refusal of a dedicated offer (null when it gave none).
  reason("offer-refused", { refusal: OfferRefusal.nullable() }),
  reason("machine-departed", { machineId: str }),
  // A market of several managers: the machine is to register with this one (market/managers.ts).
  reason("register-elsewhere", { managerId: str, managerUrl: str }),
  reason("machine-moved", { machineId: str, managerId: str, managerUrl: str }),
  // One machine offered to several managers (its offerKey): one row a manager, none left to offer it to.
  reason("offered-here-already", { managerId: str }),
  reason("offered-to-every-manager", { managers: num }),
  // An admin moving machines between managers (market/machine-moves.ts): each refusal names why.
  reason("manager-not-live", { managerId: str }),
  reason("machine-already-there", { machineId: str, managerId: str }),
  // A dedicated machine's contract stays with its manager until it ends (ms since the epoch).
  reason("machine-dedicated", { machineId: str, contractEndsAt: num }),
  // A busy machine an admin moved: it takes no new work and goes once its leases end (market/machine-drains.ts).
  reason("machine-draining", { machineId: str, fromManagerId: str, toManagerId: str, leases: num }),
  reason("machine-drain-cancelled", { machineId: str, toManagerId: str }),
  // Its leases ended when the manager it was to go to was no longer live: it works where it is.
  reason("machine-drain-dropped", { machineId: str, toManagerId: str }),
  reason("machine-not-draining", { machineId: str }),
  // A job split across managers (market/job-split.ts): a part its manager did not admit, so none was kept.
  reason("split-part-refused", { managerId: str, fromTask: num, tasks: num, outcome: z.enum(["delayed", "rejected", "failed"]), partReasons: z.array(z.looseObject({ code: str })) }),
  reason("machine-offered-to-several", { machineId: str }),
  // Its worker does not follow a move (a browser page behind the web app): it stays where it registered.
  reason("machine-cannot-follow", { machineId: str }),
  reason("not-your-machine", { machineId: str }),
  reason("stale-lease", { leaseId: str }),
  reason("output-too-large", { bytes: num, max: num }),
  reason("hash-mismatch", { claimed: str, actual: str }),
  reason("no-output", { index: num }),
  // The decision log's own entries: why a machine left, and tasks placed again after losing theirs.
  reason("machine-left", {}),
  reason("missed-heartbeats", {}),
  reason("contract-ended", {}),
  reason("missed-leases", {}),
  // A dead Market Manager's row of a machine offered to several: the others hold rows of their own.
  reason("manager-gone", {}),
  reason("placed-again", {}),
  reason("machine-handed", { fromManagerId: str, toManagerId: str }),
  // A decision recorded before the engine owned the wait rule: kept so old records still read.
  reason("waited-too-long", { waitedMs: num, maxDelayMs: num }),
]);
export type ServiceReason = z.infer<typeof ServiceReason>;

/** What is wrong with a file name a task gives (the client's sandbox-path.ts finds it). */
export const PathProblem = z.enum(["empty", "absolute", "parent", "root", "nul", "backslash", "too-long"]);
export type PathProblem = z.infer<typeof PathProblem>;

/** What is wrong with a job file or its tasks (the client checks the same before sending). */
export const JobFileReason = z.discriminatedUnion("code", [
  reason("file-name-refused", { task: num, name: str, problem: PathProblem }),
  reason("input-file-name-refused", { task: num, name: str, problem: PathProblem }),
  reason("too-many-files", { task: num, files: num, max: num }),
  reason("too-many-env", { task: num, count: num, max: num }),
  reason("stdin-too-large", { task: num, bytes: num, maxBytes: num }),
  reason("task-files-too-large", { task: num, bytes: num, maxBytes: num }),
  reason("job-input-too-large", { bytes: num, maxBytes: num }),
  reason("not-base64", { task: num, field: str }),
  reason("input-file-missing", { path: str, detail: str.optional() }),
  reason("no-lines", { path: str }),
  reason("too-many-lines", { path: str, lines: num, max: num }),
]);
export type JobFileReason = z.infer<typeof JobFileReason>;

/** Why an uploaded module was refused (the sandbox's validation, `module-` before its code). */
export const ModuleReason = z.discriminatedUnion("code", [
  reason("module-too-large", { bytes: num, maxBytes: num }),
  reason("module-unknown", { hash: str }),
  reason("module-not-wasm", { bytes: num }),
  reason("module-invalid-wasm", { detail: str }),
  reason("module-forbidden-import", { module: str, name: str, kind: z.enum(["function", "table", "memory", "global", "tag"]) }),
  reason("module-no-start", {}),
  reason("module-bad-start-signature", { params: num, results: num }),
  reason("module-no-memory", {}),
  reason("module-unsupported-memory", { feature: z.enum(["shared", "memory64", "several"]) }),
  reason("module-memory-too-large", { initialPages: num, maxMemoryPages: num }),
]);
export type ModuleReason = z.infer<typeof ModuleReason>;


/** Every reason and refusal the market can give. */
export const MarketReason = z.discriminatedUnion("code", [Reason, ChargeReason, ServiceReason, JobFileReason, ModuleReason]);
export type MarketReason = z.infer<typeof MarketReason>;
export type MarketReasonCode = MarketReason["code"];
/** The reason of one code, its fields typed: what a sentence for that code is given. */
export type MarketReasonOf<C extends MarketReasonCode> = Extract<MarketReason, { code: C }>;

function codesOf(u: { options: readonly { shape: { code: { value: unknown } } }[] }): string[] {
  return u.options.map((o) => o.shape.code.value as string);
}

/** Every code of the vocabulary, for tests and for tables that must cover them all. */
export const MARKET_REASON_CODES = [...codesOf(Reason), ...codesOf(ChargeReason), ...codesOf(ServiceReason), ...codesOf(JobFileReason), ...codesOf(ModuleReason)] as MarketReasonCode[];

/** Whether `code` is one the market can give. */
export function isMarketReasonCode(code: string): code is MarketReasonCode {
  return (MARKET_REASON_CODES as string[]).includes(code);
}

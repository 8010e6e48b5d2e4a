// The Market Manager as a producer sees it: register, lease tasks, fetch modules, heartbeat,
// report results, depart. The service implements these as tRPC procedures `worker.<name>`
// using the same schemas as inputs and outputs; the producer loop (producer.ts) only sees the
// WorkerApi interface, so it runs the same against the real service or an in-memory fake.
import { z } from "zod";
import { OFFER_LIMITS } from "@cyclemarket/costbenefit/offer-limits";
import { nameText, storableText } from "./text.ts";
import { MachineControls, MachineControlsPatch } from "./controls/machine-controls.ts";

/** An id a worker sends back: the market made it, so anything long or odd is refused before a lookup. */
const WireId = storableText(100, "An id");

export const MachineKind = z.enum(["opportunistic", "dedicated"]);
export type MachineKind = z.infer<typeof MachineKind>;

// The offers the market believes are the engine's (costbenefit offer-limits.ts); the wire refuses
// the rest here with a message naming the range.
export const MIN_PRICE = OFFER_LIMITS.minPrice;
export const MAX_PRICE_PER_SECOND = OFFER_LIMITS.maxPricePerSecond;
export const MAX_CONTRACT_PRICE = OFFER_LIMITS.maxContractPrice;
export const MIN_SPEED = OFFER_LIMITS.minSpeed;
export const MAX_SPEED = OFFER_LIMITS.maxSpeed;
export const MIN_BANDWIDTH = OFFER_LIMITS.minBandwidth;
export const MAX_BANDWIDTH = OFFER_LIMITS.maxBandwidth;
const { minSlots: MIN_SLOTS, maxSlots: MAX_SLOTS, minMemoryPerSlotMb: MIN_MEMORY, maxMemoryPerSlotMb: MAX_MEMORY } = OFFER_LIMITS;

/** A price field: 0, or from one micro-credit to `max` credits; the refusal names the range. */
const price = (what: string, max: number, unit: string) => {
  const range = `${what} is 0, or at least ${MIN_PRICE} (one micro-credit) and at most ${max.toLocaleString("en-US")} credits${unit}.`;
  return z
    .number({ error: range })
    .min(0, range)
    .max(max, range)
    .refine((v) => v === 0 || v >= MIN_PRICE, range);
};
const SPEED_RANGE = `The benchmark speed is at least ${MIN_SPEED} and at most ${MAX_SPEED} times the reference machine.`;
const BANDWIDTH_RANGE = `The bandwidth is at least ${MIN_BANDWIDTH} and at most ${MAX_BANDWIDTH} bytes per second.`;

export const RegisterRequest = z.object({
  name: nameText(100, "A machine's name"),
  kind: MachineKind,
  /** Tasks the machine runs at once (Web Workers or worker threads). */
  slots: z.number().int().min(MIN_SLOTS, `A machine runs at least ${MIN_SLOTS} task at once.`).max(MAX_SLOTS, `A machine runs at most ${MAX_SLOTS} tasks at once.`),
  /** Normalized work units per second of one slot (benchmark.ts); the reference machine is 1.0. */
  speed: z.number({ error: SPEED_RANGE }).min(MIN_SPEED, SPEED_RANGE).max(MAX_SPEED, SPEED_RANGE),
  memoryPerSlotMb: z.number().int().min(MIN_MEMORY, `Each slot needs at least ${MIN_MEMORY} MB.`).max(MAX_MEMORY, "At most 1 TB per slot."),
  bandwidthBytesPerSecond: z.number({ error: BANDWIDTH_RANGE }).min(MIN_BANDWIDTH, BANDWIDTH_RANGE).max(MAX_BANDWIDTH, BANDWIDTH_RANGE),
  /** Credits asked per second of successful use (opportunistic machines). */
  pricePerSecond: price("A price", MAX_PRICE_PER_SECOND, " per second"),
  userAgent: storableText(500, "The user agent"),
  /** Dedicated machines: when the machine leaves, in ms since the epoch. */
  departsAt: z.number().int().positive().max(8.64e15).optional(),
  /** Dedicated machines: the total price asked for the contract, in credits (the Java Market paper, c(m)). */
  contractPrice: price("A contract's price", MAX_CONTRACT_PRICE, "").optional(),
  /** The producer's controls for this machine (pause, CPU limit, schedule, ...); unset ones keep their defaults. */
  controls: MachineControlsPatch.optional(),
  /** False when the machine's schedule or its owner's use keeps its capacity off right now. */
  available: z.boolean().optional(),
  /**
   * The worker can send its calls to another Market Manager's address: a market of several may
   * answer `register-elsewhere` with the manager to register with (the one with the most room).
   */
  follow: z.boolean().optional(),
  /** The Market Manager the producer wants its machine held by (by its id), when that one is up. */
  manager: storableText(100, "A manager's id").optional(),
  /**
   * The same physical machine offered to several Market Managers at once: every one of its
   * registrations carries this key (chosen by the worker), and each manager holds it once.
   * Opportunistic machines only.
   */
  offerKey: z.string().uuid("The offer key is a UUID.").optional(),
});
export type RegisterRequest = z.infer<typeof RegisterRequest>;

export const RegisterResponse = z.object({
  machineId: z.string(),
  /** A machine silent for this long has departed and loses its leases. */
  leaseTimeoutMs: z.number().int().positive(),
  heartbeatIntervalMs: z.number().int().positive(),
  /** The controls the market keeps for the machine. */
  controls: MachineControls.optional(),
  /** The Market Manager that holds the machine, and where its calls and work stream go. */
  managerId: z.string().optional(),
  managerUrl: z.string().optional(),
});
export type RegisterResponse = z.infer<typeof RegisterResponse>;

export const LeaseRequest = z.object({
  machineId: WireId,
  /** Most leases wanted now: the machine's free slots. */
  max: z.number().int().min(1).max(256),
});
export type LeaseRequest = z.infer<typeof LeaseRequest>;

/**
 * The job's limits for one task, which the sandbox enforces: wall time (the thread is stopped),
 * memory in 64 KiB pages (linear memory and scratch files together), and stdout bytes.
 */
export const LeaseLimits = z.object({
  wallMs: z.number().int().positive(),
  memoryPages: z.number().int().positive(),
  outputBytes: z.number().int().positive(),
});
export type LeaseLimits = z.infer<typeof LeaseLimits>;

export const Lease = z.object({
  leaseId: z.string(),
  taskId: z.string(),
  /** Keys the task's clock and random source; copies of one task share it so honest machines agree. */
  seed: z.string().optional(),
  jobId: z.string(),
  /** SHA-256 hex of the module's bytes; the producer checks the bytes it fetches against it. */
  moduleHash: z.string(),
  /** argv after the program name. */
  args: z.array(z.string()),
  /** base64 */
  stdin: z.string(),
  /**
   * Input files by path relative to the task's root, contents base64; mounted read-only under "/"
   * (checkTaskFiles says which names are accepted).
   */
  files: z.record(z.string(), z.string()).optional(),
  /** Environment variables the task sees; none when absent. */
  env: z.record(z.string(), z.string()).optional(),
  limits: LeaseLimits,
  /**
   * ms since the epoch: the lease ends then, whatever heartbeats say, and its task is placed again;
   * a result reported later still counts only if no other run of the task was accepted first.
   */
  expiresAt: z.number(),
  /** What the run is paid if its result is accepted, in micro-credits (a pilot's: the most it is paid). */
  pieceRateMicro: z.string().regex(/^\d{1,20}$/).optional(),
});
export type Lease = z.infer<typeof Lease>;

export const LeaseResponse = z.object({ leases: z.array(Lease) });
export type LeaseResponse = z.infer<typeof LeaseResponse>;

export const ModuleRequest = z.object({
  moduleHash: WireId,
  /**
   * The machine whose lease runs the module: the market looks at that machine's leases only.
   * Without it, at every machine of the caller's. The bytes are sent only under such a lease.
   */
  machineId: WireId.optional(),
});
export type ModuleRequest = z.infer<typeof ModuleRequest>;

export const ModuleResponse = z.object({ /** base64 */ bytes: z.string() });
export type ModuleResponse = z.infer<typeof ModuleResponse>;

export const HeartbeatRequest = z.object({
  machineId: WireId,
  /** The leases whose tasks are running or waiting to be reported. */
  leaseIds: z.array(WireId).max(1024),
});
export type HeartbeatRequest = z.infer<typeof HeartbeatRequest>;

export const HeartbeatResponse = z.object({
  /** Leases whose results can no longer count (their task was decided, or taken back): abandoned, not reported. */
  expiredLeaseIds: z.array(z.string()),
  /** The machine's controls as the market keeps them: the producer may have changed them elsewhere (/produce). */
  controls: MachineControls.optional(),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponse>;

/**
 * The worker tells the market what capacity it offers now: `available` is false while its
 * schedule or its owner's use switches it off; `controls` changes the producer's controls (the
 * CLI, or the page running the machine). The market answers with the controls it keeps.
 */
export const OfferRequest = z.object({
  machineId: WireId,
  available: z.boolean(),
  controls: MachineControlsPatch.optional(),
});
export type OfferRequest = z.infer<typeof OfferRequest>;

export const OfferResponse = z.object({ controls: MachineControls });
export type OfferResponse = z.infer<typeof OfferResponse>;

export const TaskErrorCode = z.enum(["trap", "output-limit", "memory-limit", "invalid-module", "timeout", "crashed", "aborted"]);
export type TaskErrorCode = z.infer<typeof TaskErrorCode>;

export const ReportRequest = z.object({
  machineId: WireId,
  /** Every report names its lease; a report for a lease that is no longer current is refused. */
  leaseId: WireId,
  /** -1 when the task did not exit by itself (see error). */
  exitCode: z.number().int().min(-(2 ** 31)).max(2 ** 31 - 1),
  /** base64 */
  stdout: z.string(),
  /** base64 */
  stderr: z.string(),
  /** SHA-256 hex of the stdout bytes. */
  outputHash: storableText(128, "The output hash"),
  elapsedMs: z.number().nonnegative().max(1e10, "elapsedMs is at most 1e10."),
  error: z.object({ code: TaskErrorCode, message: storableText(4000, "The error message") }).optional(),
});
export type ReportRequest = z.infer<typeof ReportRequest>;

export const ReportResponse = z.object({
  accepted: z.boolean(),
  /** Why a report was refused, e.g. { code: "stale-lease" }, with any numbers behind it. */
  reason: z.looseObject({ code: z.string() }).optional(),
});
export type ReportResponse = z.infer<typeof ReportResponse>;

/** `worker.report`: one result, and optionally the next tasks, leased once the result is in (as `lease` would). */
export const ReportAndLeaseRequest = ReportRequest.extend({ lease: LeaseRequest.optional() });
export type ReportAndLeaseRequest = z.infer<typeof ReportAndLeaseRequest>;

export const ReportAndLeaseResponse = ReportResponse.extend({
  /** The leases asked for with `lease` (none when the market could not lease: the worker's own lease call then hears why). */
  leases: z.array(Lease).optional(),
});
export type ReportAndLeaseResponse = z.infer<typeof ReportAndLeaseResponse>;

/** Reports one call may carry, and the output bytes (stdout + stderr, base64) they may carry together. */
export const REPORTS_PER_CALL = { max: 32, outputBytes: 4 << 20 };

/** Several results in one call, each under its own lease, each answered on its own. */
export const ReportManyRequest = z.object({
  reports: z.array(ReportRequest).min(1).max(REPORTS_PER_CALL.max, `At most ${REPORTS_PER_CALL.max} reports per call (reports-per-call).`),
  /**
   * New tasks wanted in the same call, leased once these reports have freed their slots (as
   * `lease` would): a busy worker then makes one request per cycle.
   */
  lease: LeaseRequest.optional(),
});
export type ReportManyRequest = z.infer<typeof ReportManyRequest>;

/**
 * One answer per report, in order: the market's answer, or `error` when this report got none
 * (its refusal: `code` the tRPC code, `reason` the market's), as a single report call would have failed.
 */
export const ReportManyResponse = z.object({
  answers: z.array(
    ReportResponse.extend({
      error: z.object({ code: z.string(), reason: z.looseObject({ code: z.string() }).optional(), message: z.string() }).optional(),
    }),
  ),
  /** The leases asked for with `lease` (none when the market could not lease: the worker's own lease call then hears why). */
  leases: z.array(Lease).optional(),
});
export type ReportManyResponse = z.infer<typeof ReportManyResponse>;

export const DepartRequest = z.object({ machineId: WireId });
export type DepartRequest = z.infer<typeof DepartRequest>;

/**
 * Opens the machine's work stream (`live.work`, server-sent events). `lastEventId` is the id of
 * the last offer seen; the client sends it again when it reconnects. With `lease`, the worker
 * takes leases on the stream: while the machine holds no lease, the market leases it up to
 * `lease.max` tasks itself and sends them with the offer, saving the idle worker a round trip.
 * A market that does not know `lease` ignores it and sends plain offers.
 */
export const WorkStreamRequest = z.object({
  machineId: WireId,
  lastEventId: storableText(100, "The last event id").nullish(),
  lease: LeaseRequest.pick({ max: true }).optional(),
});
export type WorkStreamRequest = z.infer<typeof WorkStreamRequest>;

/**
 * Pushed when the market has work this machine could lease now; the worker then leases as usual.
 * On a stream opened with `lease`, it may carry leases already made (durable, as a lease call's).
 */
export const WorkOffer = z.object({
  machineId: z.string(),
  /** About how many tasks a lease would get now, beside `leases` (a hint: the lease decides). */
  available: z.number().int().nonnegative(),
  leases: z.array(Lease).optional(),
});
export type WorkOffer = z.infer<typeof WorkOffer>;

/** What the producer loop hears from a work stream. */
export interface WorkStreamHandlers {
  offer(offer: WorkOffer): void;
  /** live: connected and listening; reconnecting: the connection dropped and is being made again. */
  state(state: "live" | "reconnecting"): void;
  /** The stream ended for good: refused (its reason in the error), or closed by the market. */
  end(error: unknown): void;
}

export interface WorkerApi {
  register(input: RegisterRequest): Promise<RegisterResponse>;
  lease(input: LeaseRequest): Promise<LeaseResponse>;
  module(input: ModuleRequest): Promise<ModuleResponse>;
  heartbeat(input: HeartbeatRequest): Promise<HeartbeatResponse>;
  report(input: ReportAndLeaseRequest): Promise<ReportAndLeaseResponse>;
  /** Several results in one call; optional for old markets (the loop then reports one by one). */
  reportMany?(input: ReportManyRequest): Promise<ReportManyResponse>;
  depart(input: DepartRequest): Promise<void>;
  /** Tells the market the capacity the machine offers now (producer controls); optional for old markets. */
  offer?(input: OfferRequest): Promise<OfferResponse>;
  /**
   * Optional push: calls `handlers.offer` whenever the market has work for the machine, until the
   * returned function closes the stream. Without it the loop only polls.
   */
  watchWork?(input: WorkStreamRequest, handlers: WorkStreamHandlers): () => void;
}

/**
 * Which Market Manager holds a machine now (`worker.whereIs`, asked of the market's front door by
 * a worker whose manager stopped answering): its address, whether it is alive, or null when the
 * machine is no longer in the market.
 */
export const WhereIsRequest = z.object({ machineId: WireId });
export type WhereIsRequest = z.infer<typeof WhereIsRequest>;
export const WhereIsResponse = z.object({ managerId: z.string().nullable(), managerUrl: z.string().nullable(), alive: z.boolean() });
export type WhereIsResponse = z.infer<typeof WhereIsResponse>;

/**
 * The live Market Managers, the most room first (`worker.managers`): a worker offering its machine
 * to several picks among them. `url` null: the address the worker reached the market at.
 */
export const ManagersResponse = z.object({ managers: z.array(z.object({ id: z.string(), url: z.string().nullable() })) });
export type ManagersResponse = z.infer<typeof ManagersResponse>;

/** Input and output schema of each worker procedure, for the service's router and for clients. */
export const WORKER_PROCEDURES = {
  register: { input: RegisterRequest, output: RegisterResponse },
  lease: { input: LeaseRequest, output: LeaseResponse },
  module: { input: ModuleRequest, output: ModuleResponse },
  heartbeat: { input: HeartbeatRequest, output: HeartbeatResponse },
  report: { input: ReportAndLeaseRequest, output: ReportAndLeaseResponse },
  reportMany: { input: ReportManyRequest, output: ReportManyResponse },
  depart: { input: DepartRequest, output: z.void() },
  offer: { input: OfferRequest, output: OfferResponse },
} as const;
export type WorkerProcedure = keyof typeof WORKER_PROCEDURES;

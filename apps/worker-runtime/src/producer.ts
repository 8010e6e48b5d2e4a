// The producer loop shared by the Node CLI and the browser's /produce page: register the
// machine, keep up to `slots` leased tasks running, heartbeat, report each result under its
// lease, and depart when told to stop. The market is reached only through WorkerApi.
//
// The loop outlives the market's outages: a call that fails without an answer (the Market
// Manager restarting, its database away) is tried again with backoff while tasks keep running,
// and a finished task's result is kept and reported again until the market either takes it or
// says its lease is no longer current. When the market says the machine itself is gone (it
// missed heartbeats past the lease timeout), every lease it held is void: the loop gives up
// those tasks and registers again.
//
// The producer's controls (controls/): while the machine is paused, outside its schedule or in
// use by its owner, the loop leases nothing and the market plans nothing on it; under a CPU
// limit each slot rests after a task in proportion to the task's run (SlotRests).
//
// While tasks are short the loop holds more leases than it has slots (the market lets a machine
// hold twice its slots): the spare ones wait in the executor's queue, so a slot that finishes
// starts its next task at once, while the finished task's report, and the ask for its successor,
// are on their way.
import { batchReports } from "./report-many.ts";
import type { Lease, RegisterRequest, ReportRequest, WorkerApi } from "./api.ts";
import { MachineControls, offReason, type MachineControlsPatch, type OffReason } from "./controls/machine-controls.ts";
import { localConditions, locallyAvailable, type OwnerActivity } from "./controls/local-conditions.ts";
import { SlotRests } from "./controls/slot-rests.ts";
import { fromBase64, toBase64 } from "./base64.ts";
import type { Executor } from "./executor.ts";
import type { SlotShare } from "./slot-share.ts";
import { failedOutcome, sha256Hex, type SandboxError, type TaskOutcome } from "./sandbox.ts";

export type MachineProfile = Omit<RegisterRequest, "slots" | "controls" | "available">;

export type ProducerStage = "register" | "lease" | "module" | "heartbeat" | "report" | "depart" | "stream" | "offer";

export type ProducerEvent =
  | { type: "registered"; machineId: string; slots: number; leaseTimeoutMs: number; heartbeatIntervalMs: number }
  | { type: "leased"; leases: { leaseId: string; taskId: string; jobId: string }[] }
  | { type: "started"; leaseId: string; taskId: string; jobId: string }
  | { type: "finished"; leaseId: string; taskId: string; jobId: string; exitCode: number; elapsedMs: number; restedMs?: number; error?: SandboxError }
  | { type: "reported"; leaseId: string; taskId: string; accepted: boolean; reason?: { code: string } }
  | { type: "abandoned"; leaseId: string; taskId: string; reason: "expired" | "stopping" | "handed-back" }
  /** The market stopped answering (its manager or database away), or answers again. */
  | { type: "market"; reachable: boolean }
  /** The capacity the machine offers changed: on (reason null), or off and why; with the controls in force. */
  | { type: "capacity"; offering: boolean; reason: OffReason | null; controls: MachineControls }
  | { type: "idle"; waitMs: number }
  /** The work stream: live (the market says when there is work), reconnecting, or closed (polling only). */
  | { type: "stream"; state: "live" | "reconnecting" | "closed" }
  | { type: "error"; stage: ProducerStage; message: string; leaseId?: string }
  | { type: "departed"; machineId: string };

export interface ProducerOptions {
  api: WorkerApi;
  executor: Executor;
  machine: MachineProfile;
  /** Tasks run at once; at most the executor's slots (the default). */
  slots?: number;
  onEvent?: (event: ProducerEvent) => void;
  /** Abort to stop: running tasks are given up, the machine departs, runProducer resolves. */
  signal: AbortSignal;
  /**
   * Waits between empty lease answers grow from min to max. While the work stream is live the
   * market says when there is work, and the loop asks on its own only every `liveMs`.
   */
  idleBackoff?: { minMs: number; maxMs: number; liveMs?: number };
  /** Registration is retried while the market is unreachable, this many times. */
  registerAttempts?: number;
  /** Waits between attempts to deliver a result grow from min to max. */
  reportBackoff?: { minMs: number; maxMs: number };
  /** The producer's controls to register with (CLI flags, the page's form); the market keeps them after. */
  controls?: MachineControlsPatch;
  /** How this machine tells whether its owner is using it (for "only while idle"). */
  ownerActivity?: OwnerActivity;
  /** Changes to the controls made while the loop runs (the page running this machine): each is sent to the market. */
  controlChanges?: (listener: (patch: MachineControlsPatch) => void) => () => void;
  /** How often the schedule and the owner's activity are looked at (ms, default 1000). */
  conditionsEveryMs?: number;
  /** Leases held beyond the slots while tasks are short (PREFETCH_BELOW_MS); default as many as the slots, 0 for none. */
  prefetch?: number;
  /**
   * The machine's slots shared with loops for other Market Managers it is offered to at once
   * (slot-share.ts): this loop asks for at most the slots none of them holds, holds no spare
   * lease, and takes no lease on its work stream (the market would lease up to all the slots).
   */
  share?: SlotShare;
}

export interface ProducerSummary {
  machineId: string | null;
  tasksRun: number;
  reportsAccepted: number;
  reportsRefused: number;
  abandoned: number;
}

/** tRPC codes that mean "no answer yet, ask again" rather than a refusal. */
const TRANSIENT = new Set(["INTERNAL_SERVER_ERROR", "SERVICE_UNAVAILABLE", "BAD_GATEWAY", "GATEWAY_TIMEOUT", "TIMEOUT", "TOO_MANY_REQUESTS", "CLIENT_CLOSED_REQUEST"]);

/**
 * The market's answer carried by a failed call: its reason (`{ code: "stale-lease" }`, ...) or
 * its tRPC code; null when there was no answer (network error, server error), worth retrying.
 */
export function refusalOf(e: unknown): { code: string } | null {
  const data = (e as { data?: { reason?: unknown; code?: unknown } | null } | null)?.data;
  const reason = data?.reason as { code?: unknown } | null | undefined;
  if (reason && typeof reason.code === "string") return reason as { code: string };
  if (typeof data?.code === "string" && !TRANSIENT.has(data.code)) return { code: data.code };
  return null;
}

/** Refusals of the caller itself (its token or its session), which no retry will change. */
const NOT_ALLOWED = new Set(["UNAUTHORIZED", "FORBIDDEN", "token-scope"]);

/** A module whose bytes do not hash to the name it was asked by: fetching it again will not help. */
class WrongModule extends Error {}

/**
 * The market no longer knows this machine (it departed): its leases are void, register again. A
 * machine handed to another Market Manager is gone too for a client that does not follow it there
 * (a browser page behind the web app; the Node worker's client follows it and never says so).
 */
const machineGone = (e: unknown) => {
  const code = refusalOf(e)?.code;
  return code === "machine-departed" || code === "machine-moved" || code === "CONFLICT";
};

interface Running {
  lease: Lease;
  controller: AbortController;
  abandoned: "expired" | "stopping" | "handed-back" | null;
  /**
   * Its report went in a call that asked for the next tasks: the market counts the lease's place
   * free once it has read the report, before it leases, so the place is counted in that ask.
   */
  handedOn: boolean;
  done: Promise<void>;
}

/**
 * Spare leases are held only while tasks run shorter than this: a spare lease keeps its task from
 * a machine that may be idle for as long as the task before it runs, which for a short task costs
 * less than the round trip it saves.
 */
export const PREFETCH_BELOW_MS = 1_000;

/**
 * Resolves after `ms`, at once when the signal aborts, or as soon as one of `wake` settles. It
 * lets go of its timer and its abort listener when it resolves, so waits that are cut short
 * (a slot freed up) do not pile up listeners on the signal.
 */
function sleep(ms: number, signal: AbortSignal, wake: Promise<unknown>[] = []): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
    for (const p of wake) p.then(done, done);
  });
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Reads the controls a market sent; a market that sends none leaves them as they were. */
const controlsFrom = (answer: { controls?: unknown }, current: MachineControls) => {
  const parsed = answer.controls === undefined ? null : MachineControls.safeParse(answer.controls);
  return parsed?.success ? parsed.data : current;
};

/**
 * The same API, telling `onChange` when calls stop getting answers (a call that failed without
 * one: refusalOf is null) and when they get them again. A refusal is an answer.
 */
function watchReachability(api: WorkerApi, onChange: (reachable: boolean) => void): WorkerApi {
  let reachable = true;
  const set = (r: boolean) => {
    if (r === reachable) return;
    reachable = r;
    onChange(r);
  };
  const watched = <I, O>(call: (input: I) => Promise<O>) => (input: I) =>
    call(input).then(
      (out) => (set(true), out),
      (e: unknown) => {
        set(refusalOf(e) !== null);
        throw e;
      },
    );
  return {
    register: watched(api.register.bind(api)),
    lease: watched(api.lease.bind(api)),
    module: watched(api.module.bind(api)),
    heartbeat: watched(api.heartbeat.bind(api)),
    report: watched(api.report.bind(api)),
    ...(api.reportMany ? { reportMany: watched(api.reportMany.bind(api)) } : {}),
    depart: watched(api.depart.bind(api)),
    ...(api.offer ? { offer: watched(api.offer.bind(api)) } : {}),
    ...(api.watchWork
      ? {
          watchWork: (input, handlers) =>
            api.watchWork!(input, {
              ...handlers,
              state: (state) => {
                if (state === "live") set(true);
                handlers.state(state);
              },
            }),
        }
      : {}),
  };
}

export async function runProducer(options: ProducerOptions): Promise<ProducerSummary> {
  const { executor, signal } = options;
  const api = watchReachability(options.api, (reachable) => emit({ type: "market", reachable }));
  const slots = Math.max(1, Math.min(options.slots ?? executor.slots, executor.slots));
  const backoff = { minMs: 250, maxMs: 5_000, liveMs: 30_000, ...options.idleBackoff };
  const reportBackoff = options.reportBackoff ?? { minMs: 500, maxMs: 5_000 };
  const emit = (event: ProducerEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // A failing display must not stop production.
    }
  };
  const summary: ProducerSummary = { machineId: null, tasksRun: 0, reportsAccepted: 0, reportsRefused: 0, abandoned: 0 };

  const running = new Map<string, Running>();
  /** Slots promised to lease calls in flight (the loop's own, or one riding on reports). */
  let asking = 0;
  // Spare leases wait in the executor's queue, which feeds all of its slots: none when the loop uses fewer.
  const prefetch = slots === executor.slots && !options.share ? Math.max(0, Math.floor(options.prefetch ?? slots)) : 0;
  /** How long recent tasks ran (a moving average, ms); null before the first. */
  let recentTaskMs: number | null = null;
  /** Leases the loop may hold now: its slots, and spare ones while tasks are short and no slot rests between them. */
  const capacity = () => slots + (recentTaskMs !== null && recentTaskMs < PREFETCH_BELOW_MS && controls.cpuLimit >= 100 ? prefetch : 0);
  /** Leases held whose places are not counted in an ask already. */
  const held = () => {
    let n = 0;
    for (const r of running.values()) if (!r.handedOn) n++;
    return n;
  };
  /** The slots this loop takes up now, as the loops it shares the machine with see it. */
  const load = () => held() + rests.resting() + asking;
  const share = options.share;
  const leaveShare = share?.join(load);
  /** Leases to ask for now, the places of `freeing` (reports about to be sent with the ask) counted free. */
  const room = (freeing: Running[] = []) => capacity() - (held() - freeing.length) - rests.resting() - asking - (share?.others(load) ?? 0);
  /** Loops this one shares the machine with, waiting for room, are told it let a slot go. */
  const letGo = () => share?.changed();
  // Reports made in the same moment go as one call where the market takes several, and that call
  // asks for the tasks to fill the slots they free (report-many.ts).
  const sendReport = api.reportMany
    ? batchReports(api.reportMany.bind(api), api.report.bind(api), {
        ask: (reports) => {
          const id = machineId;
          if (id === null || !offering || signal.aborted || reports.some((r) => r.machineId !== id)) return null;
          const freeing = reports.map((r) => running.get(r.leaseId)).filter((r): r is Running => r !== undefined && !r.handedOn);
          const free = room(freeing);
          if (free <= 0) return null;
          for (const r of freeing) r.handedOn = true;
          asking += free;
          return { machineId: id, max: free };
        },
        leased: (leases, asked) => {
          asking -= asked.max;
          // Started below in the same turn: only the places asked for and not leased are free for the others.
          queueMicrotask(letGo);
          if (machineId !== asked.machineId || signal.aborted) return; // void, or given back by departing
          const taken = leases.slice(0, asked.max);
          if (!taken.length) return;
          idleMs = backoff.minMs;
          emit({ type: "leased", leases: taken.map((l) => ({ leaseId: l.leaseId, taskId: l.taskId, jobId: l.jobId })) });
          for (const lease of taken) start(lease, asked.machineId);
        },
      })
    : api.report.bind(api);
  const modules = new Map<string, Promise<Uint8Array>>();
  /** The machine the market knows us as; null until registered, and again once it is gone. */
  let machineId: string | null = null;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  /** Closes the machine's work stream; null when there is none. */
  let closeStream: (() => void) | null = null;
  let streamLive = false;
  /** The market offered work since the last lease was asked for; `wakeForWork` ends an idle wait then. */
  let workOffered = false;
  let wakeForWork: () => void = () => {};

  // ---- the producer's controls: what the market keeps, and what this machine sees of itself
  let controls = MachineControls.parse(options.controls ?? {});
  /** A change made while running that the market has not confirmed yet. */
  let unsentPatch: MachineControlsPatch | null = null;
  /** What the market last heard about this machine's own conditions. */
  let toldAvailable: boolean | null = null;
  let offering = true;
  let offSince: OffReason | null = null;
  const rests = new SlotRests();
  const local = () => localConditions(controls, options.ownerActivity, new Date());

  // ---- register, retrying while the market is not up yet; again whenever the machine is gone
  async function register(): Promise<boolean> {
    const attempts = options.registerAttempts ?? 30;
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) return false;
      try {
        const available = locallyAvailable(controls, local());
        const registration = await api.register({ ...options.machine, slots, controls: { ...controls, ...unsentPatch }, available });
        unsentPatch = null;
        toldAvailable = available;
        controls = controlsFrom(registration, controls);
        machineId = summary.machineId = registration.machineId;
        emit({ type: "registered", machineId, slots, leaseTimeoutMs: registration.leaseTimeoutMs, heartbeatIntervalMs: registration.heartbeatIntervalMs });
        startHeartbeat(registration.machineId, registration.heartbeatIntervalMs);
        openStream(registration.machineId);
        checkCapacity(true);
        return true;
      } catch (e) {
        emit({ type: "error", stage: "register", message: message(e) });
        // A token the market does not accept stays unaccepted: waiting would only hide it.
        if (NOT_ALLOWED.has(refusalOf(e)?.code ?? "")) throw new Error(`the market refused this machine: ${message(e)}`);
        if (attempt >= attempts) throw new Error(`could not register after ${attempts} attempts: ${message(e)}`);
        await sleep(Math.min(500 * 2 ** (attempt - 1), 5_000), signal);
      }
    }
  }

  /** Called with the machine a failed call was made for: its leases died with it. */
  function lostMachine(id: string, stage: ProducerStage, e: unknown): void {
    if (machineId !== id) return; // already noticed, or already registered again
    machineId = null;
    clearInterval(heartbeat);
    stopStream();
    emit({ type: "error", stage, message: `the market no longer knows machine ${id} (${message(e)}); registering again` });
    for (const leaseId of [...running.keys()]) abandon(leaseId, "expired");
  }

  // ---- the work stream: the market says when it has work, so an idle machine need not keep asking
  function openStream(id: string): void {
    stopStream();
    if (!api.watchWork) return;
    let open = true;
    let close: (() => void) | undefined;
    const stop = () => {
      open = false;
      streamLive = false;
      close?.();
    };
    closeStream = stop;
    close = api.watchWork(
      // The market may lease up to our slots on the stream while the machine holds nothing.
      share ? { machineId: id } : { machineId: id, lease: { max: slots } },
      {
        offer: (offer) => {
          const leases = offer.leases ?? [];
          if (leases.length && machineId === id && offer.machineId === id && !signal.aborted) {
            // Leased while idle: run them now (a stopping loop's departure gives them back).
            idleMs = backoff.minMs;
            emit({ type: "leased", leases: leases.map((l) => ({ leaseId: l.leaseId, taskId: l.taskId, jobId: l.jobId })) });
            for (const lease of leases) start(lease, id);
          }
          // More on offer than came: the loop leases the rest itself.
          if (!leases.length || offer.available > 0) {
            workOffered = true;
            wakeForWork();
          }
        },
        state: (state) => {
          if (!open || streamLive === (state === "live")) return;
          streamLive = state === "live";
          emit({ type: "stream", state });
        },
        end: (error) => {
          if (!open) return;
          open = false;
          streamLive = false;
          if (closeStream === stop) closeStream = null;
          // Polling carries on; a machine that is gone is noticed by its next lease.
          if (error) emit({ type: "error", stage: "stream", message: message(error) });
          emit({ type: "stream", state: "closed" });
          wakeForWork();
        },
      },
    );
  }

  function stopStream(): void {
    closeStream?.();
    closeStream = null;
  }

  /** An idle wait: ends after `ms`, on stop, when a task finishes, or when the market offers work. */
  function idle(ms: number): Promise<void> {
    if (workOffered) return Promise.resolve();
    const offered = new Promise<void>((resolve) => (wakeForWork = resolve));
    // Not woken by the other loops' freed slots: this loop had room and its market had nothing
    // (two idle loops waking each other with their empty answers would ask without end).
    return sleep(ms, signal, [offered, ...[...running.values()].map((r) => r.done)]).finally(() => (wakeForWork = () => {}));
  }

  // ---- heartbeats, on their own timer so a long task does not silence the machine
  function startHeartbeat(id: string, everyMs: number): void {
    clearInterval(heartbeat);
    heartbeat = setInterval(() => {
      // Every lease still held, including results waiting to be delivered, is kept alive.
      const leaseIds = [...running.keys()];
      api.heartbeat({ machineId: id, leaseIds }).then(
        (answer) => {
          answer.expiredLeaseIds.forEach((leaseId) => abandon(leaseId, controls.handBack === "now" && !offering ? "handed-back" : "expired"));
          // The producer may have changed the controls elsewhere (the /produce page, an API call).
          if (!unsentPatch) controls = controlsFrom(answer, controls);
          checkCapacity(false);
        },
        (e) => (machineGone(e) ? lostMachine(id, "heartbeat", e) : emit({ type: "error", stage: "heartbeat", message: message(e) })),
      );
    }, everyMs);
  }

  /**
   * Looks at the controls and the machine's own conditions: tells the market when they changed
   * what it offers, stops leasing while it offers nothing, and gives leased tasks back at once when
   * the producer chose that.
   */
  let offerInFlight = false;
  let emittedControls = "";
  function checkCapacity(force: boolean): void {
    const conditions = local();
    const available = locallyAvailable(controls, conditions);
    const id = machineId;
    if (id !== null && api.offer && !offerInFlight && (available !== toldAvailable || unsentPatch)) {
      offerInFlight = true;
      const patch = unsentPatch;
      api
        .offer({ machineId: id, available, ...(patch ? { controls: patch } : {}) })
        .then(
          (answer) => {
            toldAvailable = available;
            if (unsentPatch === patch) unsentPatch = null;
            controls = controlsFrom(answer, controls);
          },
          (e) => emit({ type: "error", stage: "offer", message: message(e) }),
        )
        .finally(() => {
          offerInFlight = false;
          checkCapacity(false);
        });
    }
    const effective = unsentPatch ? MachineControls.parse({ ...controls, ...unsentPatch }) : controls;
    executor.setCpuLimit?.(effective.cpuLimit);
    const reason = offReason(effective, conditions);
    const nowOffering = reason === null;
    const shown = JSON.stringify(effective);
    if (!force && nowOffering === offering && reason === offSince && shown === emittedControls) return;
    offering = nowOffering;
    offSince = reason;
    emittedControls = shown;
    emit({ type: "capacity", offering, reason, controls: effective });
    if (!offering && effective.handBack === "now") for (const leaseId of [...running.keys()]) abandon(leaseId, "handed-back");
    if (offering) wakeForWork();
  }

  function moduleBytes(hash: string, forMachine: string): Promise<Uint8Array> {
    let bytes = modules.get(hash);
    if (!bytes) {
      bytes = api.module({ moduleHash: hash, machineId: forMachine }).then(async ({ bytes: b64 }) => {
        const bytes = fromBase64(b64);
        const actual = await sha256Hex(bytes);
        if (actual !== hash.toLowerCase()) throw new WrongModule(`module ${hash} arrived with hash ${actual}`);
        return bytes;
      });
      bytes.catch(() => modules.delete(hash));
      modules.set(hash, bytes);
    }
    return bytes;
  }

  /**
   * The module a lease runs. Without an answer (the market overloaded or restarting, the network
   * down) it is asked again with backoff for as long as the lease is held, as a report is: the
   * task has not failed, the market was busy. A refusal or bytes of the wrong hash are final.
   */
  async function moduleFor(lease: Lease, entry: Running, forMachine: string): Promise<Uint8Array> {
    let waitMs = reportBackoff.minMs;
    // Made only once a fetch failed: every task asks, and nearly every time the module is at hand.
    let stopped: AbortSignal | undefined;
    for (;;) {
      try {
        return await moduleBytes(lease.moduleHash, forMachine);
      } catch (e) {
        stopped ??= AbortSignal.any([signal, entry.controller.signal]);
        if (refusalOf(e) || e instanceof WrongModule || stopped.aborted) throw e;
        emit({ type: "error", stage: "module", message: message(e), leaseId: lease.leaseId });
        await sleep(waitMs, stopped);
        if (stopped.aborted) throw e;
        waitMs = Math.min(waitMs * 2, reportBackoff.maxMs);
      }
    }
  }

  /**
   * Delivers a result under its lease. Without an answer it is kept and sent again, with
   * backoff, for as long as the lease may still be current: until the market takes or refuses
   * it, a heartbeat says the lease expired, or the machine is gone.
   */
  async function report(lease: Lease, outcome: TaskOutcome, entry: Running, forMachine: string): Promise<void> {
    const body: ReportRequest = {
      machineId: forMachine,
      leaseId: lease.leaseId,
      exitCode: outcome.exitCode,
      stdout: toBase64(outcome.stdout),
      stderr: toBase64(outcome.stderr),
      outputHash: outcome.outputHash,
      elapsedMs: outcome.elapsedMs,
      ...(outcome.error ? { error: outcome.error } : {}),
    };
    let waitMs = reportBackoff.minMs;
    while (!entry.abandoned && !signal.aborted) {
      let answer: { accepted: boolean; reason?: { code: string } };
      try {
        answer = await sendReport(body);
      } catch (e) {
        const refusal = refusalOf(e);
        if (!refusal) {
          entry.handedOn = false; // the market may not have read it: the lease still holds its place
          emit({ type: "error", stage: "report", message: message(e), leaseId: lease.leaseId });
          await sleep(waitMs, signal);
          waitMs = Math.min(waitMs * 2, reportBackoff.maxMs);
          continue;
        }
        // A refusal is final: this lease is not current (stale, or its machine departed).
        answer = { accepted: false, reason: refusal };
        if (machineGone(e) && refusal.code !== "stale-lease") {
          running.delete(lease.leaseId); // reported below, not abandoned with the others
          lostMachine(forMachine, "report", e);
        }
      }
      if (answer.accepted) summary.reportsAccepted++;
      else summary.reportsRefused++;
      emit({ type: "reported", leaseId: lease.leaseId, taskId: lease.taskId, accepted: answer.accepted, ...(answer.reason ? { reason: answer.reason } : {}) });
      return;
    }
  }

  async function execute(lease: Lease, entry: Running, forMachine: string): Promise<void> {
    const ids = { leaseId: lease.leaseId, taskId: lease.taskId, jobId: lease.jobId };
    let outcome: TaskOutcome;
    try {
      const module = await moduleFor(lease, entry, forMachine);
      const files = lease.files ? Object.fromEntries(Object.entries(lease.files).map(([k, v]) => [k, fromBase64(v)])) : undefined;
      // A spare lease waits in the executor's queue: it has started once a slot takes it.
      outcome = await executor.run(
        {
          moduleHash: lease.moduleHash,
          module,
          args: lease.args,
          stdin: fromBase64(lease.stdin),
          ...(files ? { files } : {}),
          ...(lease.env ? { env: lease.env } : {}),
          seed: lease.seed ?? lease.taskId,
          limits: lease.limits,
        },
        entry.controller.signal,
        () => emit({ type: "started", ...ids }),
      );
      if (!outcome.error || outcome.error.code !== "aborted") recentTaskMs = recentTaskMs === null ? outcome.elapsedMs : (recentTaskMs + outcome.elapsedMs) / 2;
    } catch (e) {
      emit({ type: "error", stage: "module", message: message(e), leaseId: lease.leaseId });
      // The market learns at once that this task cannot run here, rather than at lease expiry.
      outcome = failedOutcome("invalid-module", `the module could not be fetched: ${message(e)}`, 0);
    }
    // Under a CPU limit a task that could not rest inside its run (restedMs absent: not paced)
    // is followed by a rest of the slot in proportion to it (duty-cycle.ts).
    if (outcome.restedMs === undefined) rests.afterRun(outcome.elapsedMs, controls.cpuLimit);
    if (entry.abandoned) return;
    summary.tasksRun++;
    emit({
      type: "finished",
      ...ids,
      exitCode: outcome.exitCode,
      elapsedMs: outcome.elapsedMs,
      ...(outcome.restedMs !== undefined ? { restedMs: outcome.restedMs } : {}),
      ...(outcome.error ? { error: outcome.error } : {}),
    });
    await report(lease, outcome, entry, forMachine);
  }

  function abandon(leaseId: string, reason: "expired" | "stopping" | "handed-back"): void {
    const entry = running.get(leaseId);
    if (!entry || entry.abandoned) return;
    entry.abandoned = reason;
    entry.controller.abort();
    summary.abandoned++;
    emit({ type: "abandoned", leaseId, taskId: entry.lease.taskId, reason });
  }

  function start(lease: Lease, forMachine: string): void {
    const entry: Running = { lease, controller: new AbortController(), abandoned: null, handedOn: false, done: Promise.resolve() };
    entry.done = execute(lease, entry, forMachine)
      .catch((e) => emit({ type: "error", stage: "report", message: message(e), leaseId: lease.leaseId }))
      .finally(() => {
        running.delete(lease.leaseId);
        letGo();
      });
    running.set(lease.leaseId, entry);
  }

  // ---- lease and run until stopped
  let idleMs = backoff.minMs;
  const conditionsTimer = setInterval(() => checkCapacity(false), options.conditionsEveryMs ?? 1_000);
  const stopListening = options.controlChanges?.((patch) => {
    unsentPatch = { ...unsentPatch, ...patch };
    checkCapacity(false);
  });
  try {
    while (!signal.aborted) {
      if (machineId === null) {
        // Tasks of the machine that is gone may still be winding down; their slots are free.
        if (!(await register())) break;
        continue;
      }
      const id: string = machineId;
      if (!offering) {
        // Switched off: lease nothing until the controls or the machine's own conditions change.
        await idle(backoff.liveMs);
        continue;
      }
      const free = room();
      if (free <= 0) {
        const wake = rests.nextWakeInMs();
        await sleep(wake === null ? backoff.maxMs : Math.min(backoff.maxMs, wake + 5), signal, [...running.values()].map((r) => r.done).concat(share ? [share.freed()] : []));
        continue;
      }
      let leases: Lease[] = [];
      workOffered = false;
      asking += free;
      try {
        leases = (await api.lease({ machineId: id, max: free })).leases.slice(0, free);
      } catch (e) {
        if (machineGone(e)) {
          lostMachine(id, "lease", e);
          continue;
        }
        emit({ type: "error", stage: "lease", message: message(e) });
      } finally {
        asking -= free;
      }
      if (leases.length < free) letGo();
      if (signal.aborted) {
        // Leased while stopping: depart returns them to the market.
        break;
      }
      if (leases.length > 0) {
        idleMs = backoff.minMs;
        emit({ type: "leased", leases: leases.map((l) => ({ leaseId: l.leaseId, taskId: l.taskId, jobId: l.jobId })) });
        for (const lease of leases) start(lease, id);
        continue;
      }
      // With the stream live the market says when there is work; the loop still asks now and then.
      const waitMs = streamLive ? backoff.liveMs : idleMs;
      if (running.size === 0) emit({ type: "idle", waitMs });
      // Wake early when a slot frees up, so a busy market keeps every slot full.
      await idle(waitMs);
      idleMs = Math.min(idleMs * 2, backoff.maxMs);
    }
  } finally {
    clearInterval(heartbeat);
    clearInterval(conditionsTimer);
    stopListening?.();
    leaveShare?.();
    options.ownerActivity?.close?.();
    stopStream();
    for (const id of [...running.keys()]) abandon(id, "stopping");
    await Promise.allSettled([...running.values()].map((r) => r.done));
    const id = machineId as string | null;
    if (id !== null) {
      try {
        await api.depart({ machineId: id });
        emit({ type: "departed", machineId: id });
      } catch (e) {
        emit({ type: "error", stage: "depart", message: message(e) });
      }
    }
  }
  return summary;
}

import { createHash, hash as digest } from "node:crypto";
import { opsOf } from "../ops/ops.ts";
import type { Caller } from "../api/trpc.ts";
import { refuse, Refusal } from "../api/errors.ts";
import type { Market } from "../market/market.ts";
import { askOf, baseTaskId, leaseRoomOf, offeredSlots, type LiveLease, type LiveMachine, type LiveProbe, type LiveTask } from "../market/live.ts";
import { missed, proved, rejoined } from "./presence.ts";
import { probeAnswered, probeDone, probeToHand } from "./probes.ts";
import { planRequeue } from "../market/requeue.ts";
import { mayNotRun } from "../market/replicas.ts";
import { FactChanges } from "../market/standing.ts";
import type { Reason } from "../market/engine.ts";
import { idleTake, idleTakeOrder, spareFrom } from "@cyclemarket/costbenefit";
import { toCredits } from "../ledger/ledger.ts";
import { ownMachine } from "./machines.ts";
import { inOrder, ReportBatch, type Gone, type LeaseAsk } from "../tasks/report-batch.ts";
import { runStatement } from "../db/sql/statement.ts";
import { leaseTasks as leaseTasksStatement, type LeasedRow, type LeaseTasksParams } from "../db/sql/lease-tasks.ts";
import { budgetLeft, latestReportAt, leaseTermsOfTask, type LeaseTerms } from "./lease-terms.ts";
import { tasksLeased } from "../market/transitions.ts";
import { recordDecisions, type DecisionEntry } from "../ops/decisions.ts";
import { spareTotal } from "../market/work-routes.ts";
import type { TaskReport } from "../tasks/task-report.ts";
import type { Lease, ReportAndLeaseResponse, ReportManyResponse } from "@cyclemarket/worker-runtime";
import { rowId } from "../db/row-id.ts";
import { shortId } from "@cyclemarket/client/job-file";

export const TASK_LIMITS = { wallMs: 120_000, memoryPages: 1024, outputBytes: 1 << 20 };

/** The job file's per-task limits where it set them (tasks/job-request.ts), the market's otherwise. */
/** A task's limits: the job file's own wall time and memory where it gave them, else the market's defaults. */
export function leaseLimits(stored: unknown) {
  const own = (stored ?? {}) as Partial<typeof TASK_LIMITS>;
  return { ...TASK_LIMITS, ...(own.wallMs ? { wallMs: own.wallMs } : {}), ...(own.memoryPages ? { memoryPages: own.memoryPages } : {}) };
}

/** A machine's lease call waiting for its group (tasks/report-batch.ts). */
export interface LeaseCall extends LeaseAsk<LeaseAnswer> {
  caller: Caller;
  machineId: string;
  max: number;
  /** Asked by the market for the machine's work stream: only while the machine holds no lease. */
  onlyIdle?: boolean;
}

type LeaseAnswer = { leases: Lease[] };

/**
 * Hands up to `max` tasks to a machine: first from its own queue, then, when that is empty while
 * other machines hold queued tasks nobody has started, from the longest of those queues
 * (rebalancing: an idle slot takes queued work, docs/DESIGN.md "Rebalancing"). The call joins the
 * market's group commit: every machine asking at the same moment is leased in one statement,
 * after the reports queued before it.
 */
export async function leaseTasks(
  market: Market,
  caller: Caller,
  machineId: string,
  max: number,
  signal?: Gone,
  how: { onlyIdle?: true; behindReports?: true } = {},
): Promise<LeaseAnswer> {
  // The market's own ask for a stream (onlyIdle) is no sign of life, and goes to the group as it is.
  if (how.onlyIdle) {
    ownMachine(market, caller, machineId);
    return inGroup(market, caller, machineId, max, signal, true);
  }
  const mine = heardFrom(market, caller, machineId);
  // Behind reports still waiting in the group, the room and the queues they change are not known yet.
  return how.behindReports ? inGroup(market, caller, machineId, max, signal) : leaseHeard(market, caller, mine, max, signal);
}

/**
 * A worker's lease call for its machine, already heard from (heardFrom): answered at once when it
 * can get nothing (leaseNothing), or joining the group commit.
 */
export function leaseHeard(market: Market, caller: Caller, mine: LiveMachine, max: number, signal?: Gone): LeaseAnswer | Promise<LeaseAnswer> {
  // A probe its work stream did not hand it goes first (resources/probes.ts).
  const probe = probeToHand(mine);
  if (probe) return { leases: [probe] };
  // An opportunistic machine that missed is offered work again once it asks for some; a dedicated one must answer a probe.
  if (mine.strayedSince !== undefined && mine.kind === "opportunistic") {
    void market.serial(() => rejoined(market, mine)).catch((e: unknown) => market.log(`machine ${shortId(mine.id)} not offered work again yet: ${e instanceof Error ? e.message : String(e)}`));
  }
  return leaseNothing(market, mine, max) ?? inGroup(market, caller, mine.id, max, signal);
}

/** A lease ask in the market's group commit, answered once its statement is written. */
function inGroup(market: Market, caller: Caller, machineId: string, max: number, signal: Gone | undefined, onlyIdle = false): Promise<LeaseAnswer> {
  return new Promise<LeaseAnswer>((done, fail) => batchOf(market).addLease({ caller, machineId, max, signal, done, fail, ...(onlyIdle ? { onlyIdle: true } : {}) }));
}

/** A lease call is a sign of life, heard on arrival. Throws as ownMachine does. */
export function heardFrom(market: Market, caller: Caller, machineId: string): LiveMachine {
  const heard = market.clock.now();
  const mine = ownMachine(market, caller, machineId);
  mine.lastHeartbeatAt = heard;
  market.liveness.heard(machineId, heard);
  return mine;
}

/**
 * A lease call that could get no task is answered at once, without the market's lock or the
 * group commit: the machine has no room, or its own queue is empty and no other machine holds
 * queued work it could take (pickTasks takes only a holder's spare tasks, or copies a holder may not run, which only jobs with copies have). The
 * machine's work stream then wakes it when work comes (WorkRoutes). Half the lease calls of a
 * market with more slots than work are such calls (bench:load, emptyLeases). Null when the call
 * must go to the group.
 */
export function leaseNothing(market: Market, mine: LiveMachine, max: number): LeaseAnswer | null {
  const room = Math.min(max, leaseRoomOf(mine));
  if (room > 0 && (mine.queue.length > 0 || workElsewhere(market))) return null;
  market.workRoutes.leasedNothing(mine.id);
  return { leases: [] };
}

/** Whether any machine holds queued work another machine could take, counted once per version of the live state. */
function workElsewhere(market: Market): boolean {
  const cached = market.resources.workElsewhere;
  if (cached.revision === market.revision) return cached.value;
  const any = market.state.rerunsElsewhere.size > 0 || some(market.state.jobs.values(), (j) => j.replicas > 1 || j.copiesAdded === true) || spareTotal(market) > 0;
  market.resources.workElsewhere = { revision: market.revision, value: any };
  return any;
}

function some<T>(items: Iterable<T>, test: (item: T) => boolean): boolean {
  for (const item of items) if (test(item)) return true;
  return false;
}

/** A lease decided in memory, waiting for its rows. */
interface Planned {
  ask: LeaseCall;
  machine: LiveMachine;
  picked: LiveTask[];
  taken: Taken[];
  leaseIds: string[];
  /** Each picked task's lease terms, fixed now. */
  terms: LeaseTerms[];
}

/**
 * The lease asks of one group, on the market's lock: each machine's tasks picked in turn from
 * memory (no task twice, none a statement in the journal is leasing), all of them written in one
 * statement the journal runs, then memory moved and each ask answered. If the statement fails,
 * nothing moved and every ask of the group fails (the worker asks again). Picks at once, before
 * the returned promise, which resolves once the statement was written and memory moved.
 */
function leaseAsks(market: Market, asks: LeaseCall[]): Promise<void> {
  const now = market.clock.now();
  const claimed = new Set<LiveTask>();
  const plans: Planned[] = [];
  /** Pieces this group's leases promise, by job (they join the live leases only once written). */
  const promised = new Map<string, bigint>();
  for (const ask of asks) {
    if (ask.signal?.aborted) {
      ask.fail(refuse.gone());
      continue;
    }
    let machine: LiveMachine;
    try {
      machine = ownMachine(market, ask.caller, ask.machineId);
    } catch (e) {
      ask.fail(e);
      continue;
    }
    // The worker asks for work (the market's own ask for its stream is not the worker asking).
    // A stream's ask after the machine's own call in the same group: that call was served first.
    if (ask.onlyIdle && (held(market, machine) > 0 || plans.some((p) => p.machine === machine))) {
      ask.done({ leases: [] });
      continue;
    }
    const room = Math.min(ask.max, leaseRoomOf(machine, held(market, machine)));
    const ahead = held(market, machine);
    const terms: LeaseTerms[] = [];
    // A task whose job cannot pay this machine's piece is passed over, not leased: the tasks
    // behind it in the queue still are. A copy verification added is paid within its task's
    // share of the quote (costbenefit copyPieces), which the job's escrow holds.
    const found = pickTasks(market, machine, room, claimed, (t) => {
      const term = leaseTermsOfTask(market, machine, t, ahead + terms.length, now);
      const added = t.replica >= (market.state.jobs.get(t.jobId)?.replicas ?? 1);
      if (!added && !withinBudget(market, t.jobId, term.pieceRateMicro, promised)) return false;
      terms.push(term);
      return true;
    });
    const picked = found.picked;
    if (!picked.length) {
      market.workRoutes.leasedNothing(machine.id);
      ask.done({ leases: [] });
      continue;
    }
    for (const t of picked) claimed.add(t);
    plans.push({ ask, machine, picked, taken: found.taken, leaseIds: picked.map(() => rowId()), terms });
  }
  if (!plans.length) return Promise.resolve();
  const picked = plans.flatMap((p) => p.picked);
  for (const t of picked) t.leasing = true;
  const released = () => {
    for (const t of picked) t.leasing = undefined;
  };
  return new Promise<void>((written) =>
    market.journal.add({
      kind: "leases",
      write: () => leaseRows(market, plans, now),
      applied: (inputs) => {
        released();
        answerLeases(market, plans, inputs, now);
        written();
      },
      failed: (e) => {
        released();
        for (const p of plans) p.ask.fail(e);
        written();
      },
    }),
  );
}

/**
 * Whether a lease of `piece` fits its job's budget: what the job can be charged (the quote while
 * its estimate holds, even when the consumer's maxSpend put more in escrow; lease-terms.ts
 * budgetLeft), less what it paid, holds for late runs, and its live leases and this group's
 * promise. The market never promises producers more than the job pays: a task that does not fit
 * waits for a machine that asks less. Counts the piece in `promised` when it fits.
 */
function withinBudget(market: Market, jobId: string, piece: bigint, promised: Map<string, bigint>): boolean {
  const job = market.state.jobs.get(jobId);
  if (!job || piece === 0n) return true;
  const group = promised.get(jobId) ?? 0n;
  const left = budgetLeft(market, job) - group;
  if (piece > left) return false;
  promised.set(jobId, group + piece);
  return true;
}

/** How many of a machine's queued tasks `leasableQueued` looks at. */
const LEASABLE_LOOKS = 64;

/**
 * Whether the machine has queued work it could lease now: a task its job can pay this machine's
 * piece for. A machine whose queue holds only tasks it cannot be paid for is not failing to ask.
 */
export function leasableQueued(market: Market, machine: LiveMachine, now: number): boolean {
  let looked = 0;
  for (const id of machine.queue) {
    if (looked++ >= LEASABLE_LOOKS) return true;
    const task = market.state.tasks.get(id);
    if (task?.state !== "queued") continue;
    const piece = leaseTermsOfTask(market, machine, task, held(market, machine), now).pieceRateMicro;
    if (withinBudget(market, task.jobId, piece, new Map())) return true;
  }
  return false;
}

/** Memory once a group's lease rows are written, and each ask's answer. */
function answerLeases(market: Market, plans: Planned[], inputs: Map<string, LeaseRow>, now: number) {
  const jobs = new Set<string>();
  // A job's limits once per group, not once per lease.
  const limits = new Map<string, ReturnType<typeof leaseLimits>>();
  const limitsOf = (row: LeaseRow) => {
    let l = limits.get(row.jobId);
    if (!l) limits.set(row.jobId, (l = leaseLimits(row.taskLimits)));
    return l;
  };
  for (const p of plans) {
    p.ask.done(leased(market, p, inputs, limitsOf, now));
    for (const t of p.picked) jobs.add(t.jobId);
  }
  for (const jobId of jobs) {
    const job = market.state.jobs.get(jobId);
    if (job) {
      if (job.status === "admitted") job.status = "running";
      market.emit({ kind: "job", jobId, ownerId: job.ownerId });
    }
  }
}

/** The leases a machine holds, less those whose results a statement in the journal is writing: their slots are as good as free. */
function held(market: Market, machine: LiveMachine): number {
  let n = machine.leases.size;
  for (const id of machine.leases) if (market.state.leases.get(id)?.writing) n--;
  return n;
}

/** Memory once a lease's rows are written, and the lease call's answer. */
function leased(market: Market, { machine, picked, taken, leaseIds, terms }: Planned, inputs: Map<string, LeaseRow>, limitsOf: (row: LeaseRow) => ReturnType<typeof leaseLimits>, now: number): LeaseAnswer {
  const machineId = machine.id;
  const rows = picked.map((t, i) => ({ id: leaseIds[i]!, taskId: t.id, ...terms[i]! }));
  tasksLeased(market, machine, picked, rows, now);
  // Work taken from other machines' queues is a move with the engine's reason: say so, one line per source.
  const bySource = new Map<string, Taken[]>();
  for (const t of taken) bySource.set(t.fromMachineId, [...(bySource.get(t.fromMachineId) ?? []), t]);
  for (const [from, moves] of bySource) {
    market.log(`idle machine ${shortId(machineId)} took ${moves.length} queued task(s) from ${shortId(from)}: ${JSON.stringify(moves[0]!.reason)}`);
  }
  // And the decision log shows each as a move, per job and source, with the engine's reason. The
  // leases are committed already; the log's row follows outside the lock and its failure loses
  // only the explanation, which the market's own log above keeps.
  if (taken.length) {
    void recordDecisions(market, market.db, idleTakeEntries(market, machineId, taken, now)).catch((e: unknown) =>
      market.log(`the decision log missed ${taken.length} idle take(s): ${e instanceof Error ? e.message : String(e)}`),
    );
  }
  opsOf(market).metrics.leases.inc(rows.length);
  return {
    leases: rows.map((row) => {
      const task = inputs.get(row.taskId)!;
      return wireLease({ leaseId: row.id, taskId: row.taskId, jobId: task.jobId, moduleHash: task.moduleHash }, task, limitsOf(task), row);
    }),
  };
}

/**
 * A lease as its worker is sent it: the task's inputs (stdin and files in base64), its limits and
 * when it runs out. Built field by field in the wire's order (a lease a task, so no spreads, and
 * stdin read in place rather than copied first).
 */
export function wireLease(
  lease: { leaseId: string; taskId: string; jobId: string; moduleHash: string },
  input: { args: string[]; stdin: Uint8Array; env?: unknown; files?: unknown },
  limits: ReturnType<typeof leaseLimits>,
  terms: Pick<LiveLease, "expiresAt" | "pieceRateMicro">,
): Lease {
  const stdin = input.stdin.byteLength === 0 ? "" : Buffer.from(input.stdin.buffer, input.stdin.byteOffset, input.stdin.byteLength).toString("base64");
  const wire: Lease = { leaseId: lease.leaseId, taskId: lease.taskId, jobId: lease.jobId, moduleHash: lease.moduleHash, seed: baseTaskId(lease.taskId), args: input.args, stdin } as Lease;
  if (input.env) wire.env = input.env as Record<string, string>;
  if (input.files) wire.files = input.files as Record<string, string>;
  wire.limits = limits;
  wire.expiresAt = terms.expiresAt;
  // What the run is paid if its result is accepted (micro-credits; a pilot's: the most).
  wire.pieceRateMicro = String(terms.pieceRateMicro);
  return wire;
}

type LeaseRow = LeasedRow;

async function leaseRows(market: Market, plans: Planned[], now: number) {
  const p: Omit<LeaseTasksParams, "now" | "admitted" | "machines"> = { taskIds: [], leaseIds: [], leaseMachines: [], expires: [], rates: [], pilots: [], aheads: [] };
  const machines: Record<string, string> = {};
  for (const plan of plans) {
    plan.picked.forEach((t, i) => {
      const terms = plan.terms[i]!;
      machines[t.id] = plan.machine.id;
      p.taskIds.push(t.id);
      p.leaseIds.push(plan.leaseIds[i]!);
      p.leaseMachines.push(plan.machine.id);
      p.expires.push(terms.expiresAt);
      p.rates.push(String(terms.pieceRateMicro));
      p.pilots.push(terms.pilot);
      p.aheads.push(terms.ahead);
    });
  }
  const admitted = [...new Set(plans.flatMap((plan) => plan.picked.map((t) => t.jobId)))].filter((id) => market.state.jobs.get(id)?.status === "admitted");
  const rows = await runStatement(inOrder(market), leaseTasksStatement, { ...p, machines: JSON.stringify(machines), now, admitted });
  if (rows.length !== p.taskIds.length) throw new Error(`${p.taskIds.length - rows.length} of ${p.taskIds.length} tasks were not queued in the database`);
  return new Map(rows.map((r) => [r.id, r]));
}

/** Copies verification adds go to the machine the market's secret seed draws (replicas.ts). */
const copyDraw = (market: Market) => ({ seed: market.verification.seed, waitMs: market.settings.leaseTimeoutMs });

/** Copies of one task must run on different machines, or their agreement would prove nothing. */
function ranHere(market: Market, task: LiveTask, machineId: string, picked: LiveTask[]): boolean {
  if (mayNotRun(market.state, task, machineId, market.clock.now(), copyDraw(market))) return true;
  return market.state.copies(task).some((copy) => copy !== task && picked.includes(copy));
}

/** How many unaffordable tasks one lease call passes over before it gives up looking. */
const MAX_PASSED_OVER = 1024;

/** A task an idle machine took from another machine's queue, and the engine's reason it could. */
interface Taken {
  taskId: string;
  fromMachineId: string;
  reason: Reason;
}

/**
 * The machine's own queue first; then, when it has room left, queued work of other machines, the
 * longest queues (per slot) first and from their back, as far as the engine's idle-take rule
 * allows (a copy its holder may never run; other work only from a machine that asks no less).
 * Each machine is left what it can start itself right now.
 */
function pickTasks(
  market: Market,
  machine: LiveMachine,
  room: number,
  claimed: Set<LiveTask>,
  fits: (task: LiveTask) => boolean,
): { picked: LiveTask[]; taken: Taken[] } {
  const picked: LiveTask[] = [];
  const taken: Taken[] = [];
  let passedOver = 0;
  const takeFrom = (ids: Iterable<string>, from?: { machineId: string; reason: Reason }) => {
    for (const id of ids) {
      if (picked.length >= room || passedOver >= MAX_PASSED_OVER) return;
      const task = market.state.tasks.get(id);
      if (task?.state === "queued" && !task.leasing && !claimed.has(task) && !picked.includes(task) && !ranHere(market, task, machine.id, picked)) {
        if (!fits(task)) {
          passedOver += 1;
          continue;
        }
        picked.push(task);
        if (from) taken.push({ taskId: task.id, fromMachineId: from.machineId, reason: from.reason });
      }
    }
  };
  takeFrom(machine.queue);
  if (picked.length < room) {
    // The engine says in which order to look and what is spare; the service reads the tasks there.
    const holders = market.state
      .holders()
      .filter((m) => m.id !== machine.id)
      .map((m) => ({ machine: m, queueLength: m.queue.length, offeredSlots: offeredSlots(m), leasesRunning: m.leases.size }));
    const asks = (holderMayNotRun: boolean, other: LiveMachine) =>
      idleTake({ takerAsk: askOf(machine) / 1e6, holderAsk: askOf(other) / 1e6, holderMayNotRun });
    for (const holder of idleTakeOrder(holders)) {
      const other = holder.machine;
      const stuck: string[] = [];
      for (const id of other.queue) if (stuckOn(market, id, other.id)) stuck.push(id);
      if (stuck.length) takeFrom(stuck, { machineId: other.id, reason: asks(true, other).reason });
      const rule = asks(false, other);
      if (!rule.take) continue;
      takeFrom(other.queue.fromBack(spareFrom(holder)), { machineId: other.id, reason: rule.reason });
      if (picked.length >= room) break;
    }
  }
  return { picked, taken };
}

/** The decision log's entries for tasks an idle machine took: one move per job and source machine. */
function idleTakeEntries(market: Market, machineId: string, taken: Taken[], at: number): DecisionEntry[] {
  const groups = new Map<string, { jobId: string; from: string; reason: Reason; tasks: number }>();
  for (const t of taken) {
    const jobId = market.state.tasks.get(t.taskId)?.jobId ?? null;
    if (!jobId) continue;
    const key = `${jobId}/${t.fromMachineId}`;
    const g = groups.get(key) ?? { jobId, from: t.fromMachineId, reason: t.reason, tasks: 0 };
    g.tasks += 1;
    groups.set(key, g);
  }
  return [...groups.values()].map((g) => ({
    outcome: "move",
    at,
    jobId: g.jobId,
    userId: market.state.jobs.get(g.jobId)?.ownerId ?? null,
    machineId,
    tasks: g.tasks,
    reasons: [g.reason],
    detail: { fromMachineId: g.from },
  }));
}

function stuckOn(market: Market, taskId: string, machineId: string): boolean {
  const task = market.state.tasks.get(taskId);
  return task !== undefined && mayNotRun(market.state, task, machineId, market.clock.now(), copyDraw(market));
}

/**
 * A machine is alive when its heartbeat arrives: memory says so at once, without the market's lock
 * (nothing here waits), and PostgreSQL hears it in the next batch (resources/liveness.ts). A
 * heartbeat renews no lease: a lease ends at the time fixed when it was handed out (lease-terms.ts).
 * The answer names the leases whose results can no longer count, so the worker stops their runs.
 */
export function heartbeat(market: Market, caller: Caller, machineId: string, leaseIds: string[]) {
  const machine = ownMachine(market, caller, machineId);
  const now = market.clock.now();
  machine.lastHeartbeatAt = now;
  market.liveness.heard(machineId, now);
  const expiredLeaseIds = leaseIds.filter(
    (id) => !machine.leases.has(id) && market.state.lateLeases.get(id)?.machineId !== machine.id && market.state.probes.get(id)?.machineId !== machine.id,
  );
  // The producer's controls ride back on the heartbeat, so a change made on /produce reaches the worker.
  return { expiredLeaseIds, controls: machine.controls };
}

export type { TaskReport } from "../tasks/task-report.ts";

/** The market's reports and lease calls waiting for their group commit (made on first use). */
function batchOf(market: Market): ReportBatch<LeaseCall> {
  return (market.resources.leaseCalls ??= new ReportBatch<LeaseCall>(market, (asks) => leaseAsks(market, asks)));
}

const sha256 = (bytes: Uint8Array) => digest("sha256", bytes, "hex");
/** Most runs print nothing to stdout, or print what the worker hashed already: the empty output's hash is known. */
const EMPTY_OUTPUT_HASH = createHash("sha256").digest("hex");

/** A report as it arrived, with what needs no market state checked: its output decoded and its hash verified. */
export interface CheckedReport {
  report: TaskReport;
  stdout: Buffer;
  stderr: Buffer;
  hash: string;
}

/**
 * What can refuse a report on arrival, before it touches the market: its sizes, its hash and the
 * machine's owner. Throws the refusal; nothing has happened then (http/quick-worker-route.ts
 * hands such a call to tRPC to refuse).
 */
export function checkReport(market: Market, caller: Caller, report: TaskReport): CheckedReport {
  const stdout = Buffer.from(report.stdout, "base64");
  const stderr = Buffer.from(report.stderr, "base64");
  if (stdout.length > TASK_LIMITS.outputBytes || stderr.length > TASK_LIMITS.outputBytes) {
    throw refuse.tooLarge({ code: "output-too-large", bytes: stdout.length, max: TASK_LIMITS.outputBytes }, "The task's output is over the limit.");
  }
  const hash = stdout.length === 0 ? EMPTY_OUTPUT_HASH : sha256(stdout);
  if (hash !== report.outputHash) {
    throw refuse.badRequest({ code: "hash-mismatch", claimed: report.outputHash, actual: hash }, "The output hash does not match the output.");
  }
  ownMachine(market, caller, report.machineId);
  return { report, stdout, stderr, hash };
}

/**
 * A worker's result for the lease it names, once checkReport passed it; anything but the current
 * lease is refused. What needs no market state (sizes, the hash) was checked on arrival; the rest
 * is checked at the report's turn, in its group commit (tasks/report-batch.ts). The answer comes
 * once the result is durable (the group counts its outcome). Not async: a report is one promise, the group's own. Throws at once when the
 * market is too busy to take it.
 */
export function reportChecked(market: Market, caller: Caller, { report, stdout, stderr, hash }: CheckedReport, signal?: Gone) {
  const probe = market.state.probes.get(report.leaseId);
  if (probe) return answerProbe(market, caller, probe, report, stdout);
  const ok = report.exitCode === 0 && !report.error;
  // Found at the report's turn in its group (an unnamed function: see http/quick-worker-route.ts).
  return batchOf(market).add(() => {
    const machine = ownMachine(market, caller, report.machineId);
    const current = market.state.leases.get(report.leaseId);
    // A lease past its time still counts for a successful result while its task is undecided.
    const late = current ? undefined : ok ? market.state.lateLeases.get(report.leaseId) : undefined;
    const lease = current ?? late;
    const task = lease ? market.state.tasks.get(lease.taskId) : undefined;
    if (!lease || lease.machineId !== machine.id || !task || (late && (task.state === "done" || task.state === "failed"))) {
      opsOf(market).metrics.reports.inc({ outcome: "stale" });
      throw refuse.conflict(
        { code: "stale-lease", leaseId: report.leaseId },
        "This lease is not current (it expired and its task was run elsewhere, was abandoned, or belongs to another machine); the result was not accepted.",
      );
    }
    // Reporting a lease it holds is a proof that the machine is there (presence.ts).
    if (current) proved(machine, market.clock.now());
    return { machine, lease, task, ok, stdout, stderr, hash, report, late: late !== undefined };
  }, signal);
}

/**
 * A probe's answer (resources/probes.ts): checked against the answer the market computed, on
 * arrival, without the group commit (nothing is written). Right and in time, it proves the
 * machine is there; otherwise it is a miss.
 */
function answerProbe(market: Market, caller: Caller, probe: LiveProbe, report: TaskReport, stdout: Buffer) {
  const machine = ownMachine(market, caller, report.machineId);
  if (probe.machineId !== machine.id) {
    throw refuse.conflict({ code: "stale-lease", leaseId: report.leaseId }, "This lease belongs to another machine; the result was not accepted.");
  }
  const now = market.clock.now();
  const right = probeAnswered(probe, { exitCode: report.exitCode, stdout }, now);
  probeDone(market, machine, probe, now);
  if (right) {
    proved(machine, now);
    if (machine.strayedSince !== undefined) void market.serial(() => rejoined(market, machine)).catch(() => {});
  } else {
    void market.serial(() => missed(market, machine, probe.issuedAt, "wrong-probe")).catch((e: unknown) => market.log(`a wrong probe answer not recorded yet: ${e instanceof Error ? e.message : String(e)}`));
  }
  return Promise.resolve(right ? { accepted: true, reason: undefined } : { accepted: false, reason: { code: "probe-answer-wrong", exitCode: report.exitCode } });
}

/** `worker.report`: one checked result; with `lease`, the next tasks in the same answer, leased once the result is in (none if that lease cannot be made). */
export async function reportAndLease(
  market: Market,
  caller: Caller,
  checked: CheckedReport,
  lease: { machineId: string; max: number } | undefined,
  signal?: Gone,
): Promise<ReportAndLeaseResponse> {
  const answer = await reportChecked(market, caller, checked, signal);
  if (!lease) return answer;
  const leases = await leaseTasks(market, caller, lease.machineId, lease.max, signal).then(
    (a) => a.leases,
    () => [],
  );
  return { ...answer, leases };
}

/**
 * Several reports of one call: each is taken as a single report is (checkReport, reportChecked), all join the same group
 * commit, and each gets its own answer, or its own error as a single report call would have
 * failed (a refusal keeps its tRPC code and reason; anything else is a server error, to retry).
 * With `lease`, the same call leases up to `lease.max` new tasks once these reports freed their
 * slots, in the same group: a busy worker makes one request per cycle. A lease that cannot be
 * made answers no leases; the worker's next own lease call hears why.
 */
export async function reportMany(
  market: Market,
  caller: Caller,
  reports: TaskReport[],
  signal?: Gone,
  lease?: { machineId: string; max: number },
): Promise<ReportManyResponse> {
  const answered = Promise.all(reports.map((r) => oneOfMany(market, caller, r, signal)));
  // Asked after the reports, so it joins their group behind them.
  const leases = lease
    ? leaseTasks(market, caller, lease.machineId, lease.max, signal, { behindReports: true }).then(
        (a) => a.leases,
        () => [],
      )
    : undefined;
  return { answers: await answered, ...(leases ? { leases: await leases } : {}) };
}

type ManyAnswer = ReportManyResponse["answers"][number];

/** One report of a reportMany call: its answer, or its own error as a single report call would have failed. */
function oneOfMany(market: Market, caller: Caller, report: TaskReport, signal: Gone | undefined): Promise<ManyAnswer> | ManyAnswer {
  try {
    return reportChecked(market, caller, checkReport(market, caller, report), signal).then(
      (a): ManyAnswer => (a.reason ? { accepted: a.accepted, reason: a.reason } : { accepted: a.accepted }),
      refusedOfMany,
    );
  } catch (e) {
    return refusedOfMany(e);
  }
}

const refusedOfMany = (e: unknown): ManyAnswer => ({
  accepted: false,
  error:
    e instanceof Refusal
      ? { code: e.code, reason: e.reason, message: e.message }
      : { code: "INTERNAL_SERVER_ERROR", message: "The report could not be written; send it again." },
});

/**
 * Leases whose time ran out (fixed when they were handed out: heartbeats do not move it): the task
 * goes back to the engine and the machine keeps its place. The lease earns nothing, unless the
 * result it still reports is the task's first accepted one (then its piece is held for the job's
 * lateness): until the task is decided it waits among the late leases.
 */
export async function expireLeases(market: Market) {
  // Looked for before the lock: most ticks find none, and a step on the lock waits for the journal.
  const now = market.clock.now();
  const due = (l: LiveLease) => l.expiresAt <= now && !l.writing;
  if (!some(market.state.leases.values(), due)) return 0;
  return market.serial(async () => {
    const now = market.clock.now();
    const expired = [...market.state.leases.values()].filter((l) => l.expiresAt <= now && !l.writing);
    if (!expired.length) return 0;
    const { requeue, factsApply, ended, tasks } = await market.db.$transaction(async (tx) => {
      // Only the leases still active in PostgreSQL end here: one another manager settled meanwhile
      // (this one was silent, and taken over) is not this manager's to end, nor its task to place again.
      const rows = await tx.lease.updateManyAndReturn({
        where: { id: { in: expired.map((l) => l.id) }, status: "active" },
        data: { status: "expired", endedAt: new Date(now) },
        select: { id: true },
      });
      const ended = new Set(rows.map((r) => r.id));
      const mine = expired.filter((l) => ended.has(l.id));
      const tasks = mine.map((l) => market.state.tasks.get(l.taskId)).filter((t): t is LiveTask => !!t);
      // A lease left to expire is a fact against its owner's standing.
      const facts = new FactChanges();
      for (const l of mine) {
        const owner = market.state.machines.get(l.machineId)?.ownerId;
        if (owner) facts.add(owner, "expiredLeases");
      }
      const factsApply = await facts.write(market, tx);
      return { requeue: await planRequeue(market, tx, tasks), factsApply, ended, tasks };
    });
    factsApply();
    for (const lease of expired) {
      market.state.leases.delete(lease.id);
      const machine = market.state.machines.get(lease.machineId);
      machine?.leases.delete(lease.id);
      if (!ended.has(lease.id)) continue;
      if (machine) machine.unprovenExpiries += 1;
      const task = market.state.tasks.get(lease.taskId);
      const job = task && market.state.jobs.get(task.jobId);
      if (task && (job?.replicas ?? 1) === 1) {
        market.state.lateLeases.set(lease.id, lease);
        if (machine && job) machine.lateUntil = Math.max(machine.lateUntil ?? 0, latestReportAt(market, machine, job, lease));
      }
    }
    for (const t of tasks) t.machineId = null;
    requeue.apply();
    market.log(`${ended.size} leases expired; their tasks were placed again`);
    // A dedicated machine that took work and did not report it by its lease's end missed (presence.ts).
    for (const lease of expired.filter((l) => ended.has(l.id))) {
      const machine = market.state.machines.get(lease.machineId);
      if (machine?.kind === "dedicated") await missed(market, machine, lease.issuedAt, "expired-lease");
    }
    return ended.size;
  });
}

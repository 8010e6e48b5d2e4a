import type { Market } from "../market/market.ts";
import { refuse } from "../api/errors.ts";
import { completeTask, prepareCompletion, type CompletionStep } from "./results.ts";
import type { Completion } from "./results.ts";
import { paidBy, PlainRows, plainRow, writePlainRows, type PlainRow, type RunStatement } from "./report-rows.ts";
import { writerOf } from "../db/client.ts";
import { opsOf } from "../ops/ops.ts";

/** Reports (and lease asks) that share one group commit at most. */
export const MAX_REPORTS_PER_COMMIT = 200;

/** An escrow no plain group can exhaust: the statement itself checks each escrow's floor (report-rows.ts). */
const UNBOUNDED_ESCROW = 1n << 100n;

/**
 * Whether the caller has gone: a request's AbortSignal, or anything else that says so (a call
 * answered beside tRPC's handler needs no AbortController of its own to say it).
 */
export type Gone = Pick<AbortSignal, "aborted">;

/** A lease asked for in the same group: decided after the group's reports freed their slots. */
export interface LeaseAsk<T> {
  signal: Gone | undefined;
  done: (value: T) => void;
  fail: (e: unknown) => void;
}

interface Waiting {
  /** Finds the report's lease and task in the live market at its turn, or refuses it. */
  resolve: () => Completion;
  signal: Gone | undefined;
  done: (value: ReturnType<typeof answer>) => void;
  fail: (e: unknown) => void;
}

function answer(c: Completion) {
  return { accepted: c.ok, reason: c.ok ? undefined : { code: c.report.error?.code ?? "nonzero-exit", exitCode: c.report.exitCode } };
}

/** A report's answer once durable, counted for /metrics here (no promise of the caller's own waits for it). */
function answered(market: Market, item: Waiting, c: Completion) {
  opsOf(market).metrics.reports.inc({ outcome: c.ok ? "succeeded" : "failed" });
  item.done(answer(c));
}

/** A job settled by its group's statement: counted for /metrics as settlements written any other way are (ops.ts timedSettlement), with the statement's time. */
function settledHere(market: Market, seconds: number) {
  const { metrics } = opsOf(market);
  metrics.settlements.inc({ outcome: "completed" });
  metrics.settlementSeconds.observe(seconds);
}

/**
 * Group commit for results. Reports that arrive while the market is busy wait together and are
 * written in one transaction at their turn: one commit (one flush of PostgreSQL's log) for many
 * results instead of one each. Each report is still answered only after the transaction holding
 * it committed, and keeps every guarantee of completeTask: each is decided from memory in order,
 * later ones seeing the job's done count of earlier ones. Reports whose decision depends on other
 * copies (replicas) or on the engine placing work again (failed runs) run alone, as does a report
 * for a job that an earlier report of the group ended. If the group's transaction fails, its
 * reports are run again one by one, so one bad report cannot fail the others.
 *
 * The common group, plain reports only, is one statement and one round trip (commitPlain); the
 * lease calls that arrived with the reports follow in one statement for every machine. The
 * market's lock is held across those two statements, so memory moves only once they committed.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export class ReportBatch<A extends LeaseAsk<any>> {
  private waiting: (Waiting | A)[] = [];
  private scheduled = false;

  /** `lease` decides and writes the lease asks of a group, after its reports. */
  constructor(
    private market: Market,
    private lease: (asks: A[]) => Promise<void>,
  ) {}

  add(resolve: () => Completion, signal: Gone | undefined) {
    this.market.refuseWhenBusy(this.waiting.length);
    return new Promise<ReturnType<typeof answer>>((done, fail) => {
      this.waiting.push({ resolve, signal, done, fail });
      this.schedule();
    });
  }

  /**
   * A lease joins the group too: one statement leases for every machine that asked, after the
   * reports queued before it (a worker's reports free the slots its lease fills).
   */
  addLease(ask: A) {
    this.market.refuseWhenBusy(this.waiting.length);
    this.waiting.push(ask);
    this.schedule();
  }

  private schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    void this.market.serial(() => this.drain()).catch((e) => this.market.log(`reports not written: ${e instanceof Error ? e.message : String(e)}`));
  }

  private async drain() {
    this.scheduled = false;
    const taken = this.waiting.splice(0, MAX_REPORTS_PER_COMMIT);
    if (this.waiting.length) this.schedule();
    const batch = taken.filter((item): item is Waiting => "resolve" in item);
    const asks = taken.filter((item): item is A => !("resolve" in item));
    const group: { item: Waiting; c: Completion }[] = [];
    const alone: Waiting[] = [];
    const ended = new Set<string>();
    const leases = new Set<string>();
    for (const item of batch) {
      if (item.signal?.aborted) {
        item.fail(refuse.gone());
        continue;
      }
      let c: Completion;
      try {
        c = item.resolve();
      } catch (e) {
        item.fail(e);
        continue;
      }
      const job = this.market.state.jobs.get(c.task.jobId);
      // Only a successful run of a task without copies is decided by its own report alone.
      if (!job || !c.ok || job.replicas !== 1 || leases.has(c.lease.id)) {
        alone.push(item);
        continue;
      }
      leases.add(c.lease.id);
      group.push({ item, c });
    }
    if (group.length) await this.commit(group, ended);
    // Decided afresh, after the group: its commit may have ended their job or their lease.
    await this.runAlone(alone);
    if (asks.length) await this.lease(asks).catch((e: unknown) => asks.forEach((a) => a.fail(e)));
  }

  private async runAlone(items: Waiting[]) {
    for (const item of items) {
      try {
        const c = item.resolve();
        await completeTask(this.market, c);
        answered(this.market, item, c);
      } catch (e) {
        item.fail(e);
      }
    }
  }

  /**
   * The group's plain reports in one statement straight through the pool: one round trip, no
   * transaction around it (the statement is atomic), no escrow read first (the statement refuses
   * an escrow that cannot cover its payments). Returns the reports left for `commit`, in their
   * order: those that are not plain, or all of them if the statement failed.
   *
   * The reports of a group arrived together, so any order of them is one they could have arrived
   * in: the plain ones go first, whatever their place in the group. Taking them only up to the
   * first other one sent every report behind a report that is not plain to the transaction, where
   * each costs several round trips (before jobs' last tasks were settled here, with jobs of 20
   * tasks four in five of a busy group's reports went there).
   */
  private async commitPlain(group: { item: Waiting; c: Completion }[]) {
    const market = this.market;
    const work = new Map(group.map((g) => [g.c.task.jobId, market.state.jobs.get(g.c.task.jobId)?.workPerTask]));
    const rows: { g: (typeof group)[number]; step: CompletionStep; row: PlainRow }[] = [];
    const rest: typeof group = [];
    for (const g of group) {
      // Decided in turn: this report sees the done count and payments of the plain ones before it.
      const step = prepareCompletion(market, g.c);
      const row = plainRow(market, g.c, step, UNBOUNDED_ESCROW);
      if (!row) {
        rest.push(g);
        continue;
      }
      step.count(paidBy(row));
      rows.push({ g, step, row });
    }
    if (!rows.length) return group;
    const started = performance.now();
    try {
      await writePlainRows(market, direct(market), rows.map((r) => r.row));
    } catch (e) {
      market.log(`a group of ${rows.length} plain reports was not written in one statement (${e instanceof Error ? e.message.split("\n")[0] : String(e)}); the group is written in a transaction`);
      for (const r of rows) r.step.uncount();
      for (const [jobId, w] of work) {
        const job = market.state.jobs.get(jobId);
        if (job && w !== undefined) job.workPerTask = w;
      }
      return group;
    }
    const seconds = (performance.now() - started) / 1000;
    for (const { g, step, row } of rows) {
      step.apply({ requeue: null, resultId: row.resultId, exhausted: false, ends: row.settle !== null });
      if (row.settle) settledHere(market, seconds);
      answered(this.market, g.item, g.c);
    }
    return rest;
  }

  private async commit(all: { item: Waiting; c: Completion }[], ended: Set<string>) {
    const group = await this.commitPlain(all);
    if (!group.length) return;
    const done: { item: Waiting; c: Completion; step: CompletionStep; written: Awaited<ReturnType<CompletionStep["write"]>>; settles: boolean }[] = [];
    const started = performance.now();
    const later: Waiting[] = [];
    try {
      await this.market.db.$transaction(
        async (tx) => {
          const plain = new PlainRows(this.market, tx, [...new Set(group.map((g) => g.c.task.jobId))]);
          for (const g of group) {
            if (ended.has(g.c.task.jobId)) {
              later.push(g.item);
              continue;
            }
            // Decided in turn: this report sees the done count of the ones before it.
            const step = prepareCompletion(this.market, g.c);
            const row = await plain.take(g.c, step);
            let written: Awaited<ReturnType<CompletionStep["write"]>>;
            if (row) written = { requeue: null, resultId: row.resultId, exhausted: false, ends: row.settle !== null };
            else {
              // Written alone, after the plain rows before it: it sees the escrow and the job as they are.
              await plain.flush();
              written = await step.write(tx);
            }
            step.count(row ? paidBy(row) : 0n);
            done.push({ ...g, step, written, settles: row?.settle != null });
            if (written.ends) ended.add(g.c.task.jobId);
          }
          await plain.flush();
        },
        { timeout: 60_000 },
      );
    } catch (e) {
      this.market.log(`a group of ${group.length} reports was not committed together (${e instanceof Error ? e.message.split("\n")[0] : String(e)}); each is written alone`);
      // Memory moves only after a commit: undo the counts, then give each report its own transaction.
      for (const d of done) d.step.uncount();
      await this.runAlone(group.map((g) => g.item));
      return;
    }
    const seconds = (performance.now() - started) / 1000;
    for (const d of done) {
      d.step.apply(d.written);
      if (d.settles) settledHere(this.market, seconds);
      answered(this.market, d.item, d.c);
    }
    // Reports for a job the group ended: alone now, and refused as stale as they would have been.
    await this.runAlone(later);
  }
}

/** Statements run on the market's lock, straight through its own connections (db/client.ts writerOf), outside any transaction of Prisma's, prepared once per connection. */
export function direct(market: Market): RunStatement {
  const pool = writerOf(market.db);
  if (!pool) return (_name, text, values) => market.db.$queryRawUnsafe(text, ...values);
  return (name, text, values) => pool.query({ name, text, values });
}

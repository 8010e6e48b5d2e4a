import type { Market } from "../market/market.ts";
import { refuse } from "../api/errors.ts";
import { completeTask, prepareCompletion, type CompletionStep } from "./results.ts";
import type { Completion } from "./results.ts";
import { paidBy, PlainRows, plainRow, plainRowsApplied, writePlainRows, type PlainRow, type RunStatement } from "./report-rows.ts";
import { opsOf } from "../ops/ops.ts";

/** Reports (and lease asks) that share one group commit at most. */
export const MAX_REPORTS_PER_COMMIT = 200;

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
  /** performance.now() when it arrived. */
  at: number;
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
 * Group commit for results. Reports that arrive while a statement runs wait together and are
 * written by the next statement: one commit (one flush of PostgreSQL's log) for many results
 * instead of one each. Each report is answered only once the statement holding it committed, and
 * keeps every guarantee of completeTask: each is decided from memory in order, later ones seeing
 * the job's done count of earlier ones.
 *
 * A group is decided on the market's lock from memory alone (drain): its plain reports become
 * one statement (report-rows.ts) and its lease asks another, both handed to the market's journal
 * (market/journal.ts), which runs them in order after the lock is let go and moves memory as each
 * commits; the next group is decided while they run. What a plain statement moves ahead of its
 * commit (the jobs' done counts and payments, for later reports to see) is taken back if it fails,
 * and its leases are marked as being written, so no later group takes their reports again. Reports
 * whose decision depends on other copies (replicas) or on the engine placing work again (failed
 * runs), any report a plain statement cannot take, and the reports of a statement that failed are
 * written by transactions, alone on the market's lock (a step of their own, once the journal is
 * idle), decided afresh; so one bad report cannot fail the others.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export class ReportBatch<A extends LeaseAsk<any>> {
  private waiting: (Waiting | A)[] = [];
  private scheduled = false;

  /**
   * `lease` decides the lease asks of a group, after its reports, counting the slots their plain
   * reports free: on the lock and at once, its statement to the journal; resolves once written.
   */
  constructor(
    private market: Market,
    private lease: (asks: A[]) => Promise<void>,
  ) {}

  add(resolve: () => Completion, signal: Gone | undefined) {
    this.market.refuseWhenBusy(this.waiting.length);
    return new Promise<ReturnType<typeof answer>>((done, fail) => {
      this.waiting.push({ resolve, at: performance.now(), signal, done, fail });
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
    // Decided once no statement waits to start: what arrives while one runs joins the next group.
    this.market.journal.whenRoom(() => void this.market.pipelined(() => this.drain()).catch((e) => this.market.log(`reports not written: ${e instanceof Error ? e.message : String(e)}`)));
  }

  /** One group, decided on the lock from memory: nothing here waits. */
  private drain() {
    this.scheduled = false;
    const taken = this.waiting.splice(0, MAX_REPORTS_PER_COMMIT);
    if (this.waiting.length) this.schedule();
    const now = performance.now();
    const { reportGroupWait } = opsOf(this.market).metrics;
    for (const item of taken) if ("resolve" in item) reportGroupWait.observe((now - item.at) / 1000);
    const { group, alone, asks } = this.sort(taken);
    const { rows, rest } = this.preparePlain(group);
    if (rows.length) this.writePlain(rows);
    if (rest.length || alone.length) this.writeAlone([...rest.map((g) => g.item), ...alone], asks);
    else if (asks.length) void this.lease(asks).catch((e: unknown) => asks.forEach((a) => a.fail(e)));
  }

  /**
   * The reports taken, each found in the live market now (or refused), apart from the lease asks:
   * a successful run of a task without copies is decided by its own report alone (`group`); any
   * other report, a second report of one lease, and one whose lease a statement is writing now, go
   * `alone`.
   */
  private sort(taken: (Waiting | A)[]) {
    const group: { item: Waiting; c: Completion }[] = [];
    const alone: Waiting[] = [];
    const asks: A[] = [];
    const leases = new Set<string>();
    for (const item of taken) {
      if (!("resolve" in item)) {
        asks.push(item);
        continue;
      }
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
      if (!job || !c.ok || job.replicas !== 1 || leases.has(c.lease.id) || c.lease.writing) {
        alone.push(item);
        continue;
      }
      leases.add(c.lease.id);
      group.push({ item, c });
    }
    return { group, alone, asks };
  }

  /**
   * Reports a group's statement does not write (and the lease asks behind them): in a step of
   * their own, once the journal is idle, each decided afresh (what was written meanwhile may have
   * ended their job or their lease), in one transaction together where they can be.
   */
  private writeAlone(items: Waiting[], asks: A[]) {
    void this.market
      .serial(async () => {
        const { group, alone } = this.sort(items);
        if (group.length) await this.commit(group);
        await this.runAlone(alone);
        if (asks.length) await this.lease(asks).catch((e: unknown) => asks.forEach((a) => a.fail(e)));
      })
      .catch((e) => this.market.log(`reports not written: ${e instanceof Error ? e.message : String(e)}`));
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
   * The group's plain reports, decided in turn, each seeing the done counts and payments of the
   * plain ones before it (counted ahead of the commit), and the others (`rest`), in their order.
   *
   * The reports of a group arrived together, so any order of them is one they could have arrived
   * in: the plain ones go first, whatever their place in the group. Taking them only up to the
   * first other one sent every report behind a report that is not plain to a transaction, where
   * each costs several round trips (before jobs' last tasks were settled by the statement, with
   * jobs of 20 tasks four in five of a busy group's reports went there).
   */
  private preparePlain(group: { item: Waiting; c: Completion }[]) {
    const rows: PlainGroupRow[] = [];
    const rest: typeof group = [];
    for (const g of group) {
      const step = prepareCompletion(this.market, g.c);
      const row = plainRow(this.market, g.c, step);
      if (!row) {
        rest.push(g);
        continue;
      }
      step.count(paidBy(row));
      rows.push({ g, step, row });
    }
    return { rows, rest };
  }

  /**
   * The plain reports in one statement, straight through the market's connection: one round
   * trip, no transaction around it (the statement is atomic), no escrow read first (the
   * statement refuses an escrow that cannot cover its payments). Memory moves, and each report is
   * answered, once it committed; if it fails, what was counted ahead is taken back (a job's work
   * per task refined meanwhile stays: an estimate, which later statements may carry already) and
   * its reports are written by transactions.
   */
  private writePlain(rows: PlainGroupRow[]) {
    const market = this.market;
    for (const r of rows) r.g.c.lease.writing = true;
    const started = performance.now();
    market.journal.add({
      kind: "reports",
      write: () => writePlainRows(market, inOrder(market), rows.map((r) => r.row)),
      applied: () => {
        const seconds = (performance.now() - started) / 1000;
        plainRowsApplied(market, rows.map((r) => r.row));
        for (const { g, step, row } of rows) {
          step.apply({ requeue: null, resultId: row.c.lease.id, exhausted: false });
          if (row.settle) settledHere(market, seconds);
          answered(market, g.item, g.c);
        }
      },
      failed: (e) => {
        market.log(`a group of ${rows.length} plain reports was not written in one statement (${e instanceof Error ? e.message.split("\n")[0] : String(e)}); its reports are written by transactions`);
        for (const r of rows.toReversed()) {
          r.step.uncount();
          r.row.undo();
          r.g.c.lease.writing = false;
        }
        this.writeAlone(
          rows.map((r) => r.g.item),
          [],
        );
      },
    });
  }

  /** Reports that can share one transaction (sort's `group`), each decided in turn; in one transaction each if theirs fails. */
  private async commit(group: { item: Waiting; c: Completion }[]) {
    const ended = new Set<string>();
    const done: { item: Waiting; c: Completion; step: CompletionStep; written: Parameters<CompletionStep["apply"]>[0]; settles: boolean; row: PlainRow | null }[] = [];
    const started = performance.now();
    const later: Waiting[] = [];
    try {
      await this.market.db.$transaction(
        async (tx) => {
          const plain = new PlainRows(this.market, tx);
          for (const g of group) {
            if (ended.has(g.c.task.jobId)) {
              later.push(g.item);
              continue;
            }
            // Decided in turn: this report sees the done count of the ones before it.
            const step = prepareCompletion(this.market, g.c);
            const row = plain.take(g.c, step);
            let written: Parameters<CompletionStep["apply"]>[0];
            if (row) written = { requeue: null, resultId: row.c.lease.id, exhausted: false };
            else {
              // Written alone, after the plain rows before it: it sees the escrow and the job as they are.
              await plain.flush();
              written = await step.write(tx);
            }
            step.count(row ? paidBy(row) : 0n);
            done.push({ ...g, step, written, settles: row?.settle != null, row });
            if (row ? row.settle !== null : (written as { ends?: boolean }).ends) ended.add(g.c.task.jobId);
          }
          await plain.flush();
        },
        { timeout: 60_000 },
      );
    } catch (e) {
      this.market.log(`a group of ${group.length} reports was not committed together (${e instanceof Error ? e.message.split("\n")[0] : String(e)}); each is written alone`);
      // Memory moves only after a commit: undo the counts, then give each report its own transaction.
      for (const d of done.toReversed()) {
        d.step.uncount();
        d.row?.undo();
      }
      await this.runAlone(group.map((g) => g.item));
      return;
    }
    const seconds = (performance.now() - started) / 1000;
    plainRowsApplied(this.market, done.flatMap((d) => (d.row ? [d.row] : [])));
    for (const d of done) {
      d.step.apply(d.written);
      if (d.settles) settledHere(this.market, seconds);
      answered(this.market, d.item, d.c);
    }
    // Reports for a job the group ended: alone now, and refused as stale as they would have been.
    await this.runAlone(later);
  }
}

/** A plain report of a group: its report, its decision and its row. */
interface PlainGroupRow {
  g: { item: Waiting; c: Completion };
  step: CompletionStep;
  row: PlainRow;
}

/** The journal's entries in order, sent on its one connection after every entry before them (db/client.ts Database.journal). */
export function inOrder(market: Market): RunStatement {
  return (name, text, values) => market.resources.database.journal.rows(name, text, values);
}

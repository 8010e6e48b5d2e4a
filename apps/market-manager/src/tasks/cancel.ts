import { refuse } from "../api/errors.ts";
import { timedSettlement } from "../ops/ops.ts";
import type { Market } from "../market/market.ts";
import { settleUnfinished } from "../ledger/settlement.ts";
import { toCredits } from "../ledger/ledger.ts";
import { TASK_CHUNK } from "./intake.ts";
import { jobEnded } from "../market/transitions.ts";
import { shortId } from "@cyclemarket/client/job-file";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { abandonJobLeases, cancelledJob, failLeasedTasks, failUnstartedTasks, lockTimeout } from "../db/sql/cancel-job.ts";

/** A job that left the live market on its consumer's word, its cancellation not yet committed. */
export interface Ending {
  ownerId: string;
  at: number;
  /** The cancellation's transaction under way, shared by every call that asks for it meanwhile. */
  write?: Promise<bigint>;
}

const endingsOf = (market: Market) => market.resources.endings;

/** Attempts at a cancellation's transaction before the call fails (a later cancel tries again). */
const WRITE_ATTEMPTS = 5;
/** How long the transaction waits for a row another transaction holds, well under PostgreSQL's deadlock check (1 s). */
const LOCK_WAIT_MS = 200;

/**
 * The consumer stops a job: its open tasks and leases end, and it is charged what the market
 * already paid producers for it (docs/DESIGN.md "Settlement"); the rest of the escrow comes back.
 *
 * The market's lock covers the memory only: the job, its leases and queued tasks leave the live
 * market, so from then on nothing leases its tasks, accepts their reports or pays from its escrow
 * (every one of those runs in the lock and starts from memory). Its transaction (the running
 * tasks, the leases, the settlement, the job's row) then runs outside the lock: it sees every
 * payment, as they were all committed before the job left memory, and other users' calls are
 * not held behind it. Until it commits, the job is kept as ending: a cancel asked again meanwhile
 * waits for the same transaction, or runs it again if it failed, so the settlement (keyed once per
 * job) is written exactly once. A stop before it commits leaves the job as PostgreSQL has it, live,
 * and the consumer was never told it was cancelled.
 */
export async function cancelJob(market: Market, jobId: string) {
  const ending = await market.serial(async () => {
    const job = market.state.jobs.get(jobId);
    if (!job) return endingsOf(market).get(jobId) ?? null;
    const e: Ending = { ownerId: job.ownerId, at: market.clock.now() };
    endingsOf(market).set(jobId, e);
    jobEnded(market, jobId);
    return e;
  });
  if (!ending) {
    const row = await market.db.job.findUnique({ where: { id: jobId }, select: { status: true } });
    throw refuse.conflict({ code: "job-finished", status: row?.status ?? "unknown" }, `This job is already ${row?.status ?? "gone"}; there is nothing to cancel.`);
  }
  const charged = await (ending.write ??= commitCancellation(market, jobId, ending));
  await failUnstarted(market, jobId);
  return { cancelled: true, charged: toCredits(charged) };
}

/** The cancellation's transaction, tried a few times; once it commits the job is no longer ending. */
async function commitCancellation(market: Market, jobId: string, e: Ending): Promise<bigint> {
  for (let attempt = 1; ; attempt++) {
    try {
      const charged = await market.db.$transaction(async (tx) => {
        // Outside the market's lock this transaction can meet the lock's own on a ledger account
        // (the market's, the consumer's), locked in another order by an admission: it gives way
        // rather than wait (and never holds a step of the lock in a deadlock), and is tried again.
        const run = viaPrisma(tx);
        await runStatement(run, lockTimeout, { timeout: `${LOCK_WAIT_MS}ms` });
        // Running tasks end with the job; its unstarted tasks (all 10,000 of a big job, say) are
        // marked after the answer, in chunks: nothing reads a cancelled job's tasks as work.
        // Raw statements: no query of the client's to build and compile on the market's thread.
        await runStatement(run, abandonJobLeases, { jobId, at: e.at });
        await runStatement(run, failLeasedTasks, { jobId });
        const charge = await timedSettlement(market, "cancelled", () => settleUnfinished(tx, { jobId, consumerId: e.ownerId, why: "cancelled" }));
        await runStatement(run, cancelledJob, { jobId, at: e.at, charged: String(charge) });
        return charge;
      });
      endingsOf(market).delete(jobId);
      market.log(`job ${shortId(jobId)} cancelled; charged ${toCredits(charged)} credits`);
      market.emit({ kind: "job", jobId, ownerId: e.ownerId });
      return charged;
    } catch (err) {
      if (attempt < WRITE_ATTEMPTS) {
        await new Promise((r) => setTimeout(r, 20 * attempt));
        continue;
      }
      delete e.write;
      market.log(`job ${shortId(jobId)}: its cancellation was not written (${err instanceof Error ? err.message.split("\n")[0] : String(err)}); a cancel asked again writes it`, { level: "error" });
      throw err;
    }
  }
}

/** A cancelled job's tasks that never started, failed a chunk at a time outside the market's lock (failUnstartedTasks). */
async function failUnstarted(market: Market, jobId: string) {
  for (;;) {
    const [row] = await runStatement(viaPrisma(market.db), failUnstartedTasks, { jobId, chunk: TASK_CHUNK });
    if (!row || row.failed === 0) return;
  }
}

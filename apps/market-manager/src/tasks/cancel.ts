import { refuse } from "../api/errors.ts";
import { timedSettlement } from "../ops/ops.ts";
import type { Market } from "../market/market.ts";
import { settleUnfinished } from "../ledger/settlement.ts";
import { toCredits } from "../ledger/ledger.ts";
import { TASK_CHUNK } from "./intake.ts";
import { jobEnded } from "../market/transitions.ts";

/**
 * The consumer stops a job: its open tasks and leases end, and it is charged what the market
 * already paid producers for it (DESIGN.md "Settlement"); the rest of the escrow comes back.
 */
export async function cancelJob(market: Market, jobId: string) {
  const answer = await market.serial(async () => {
    const job = market.state.jobs.get(jobId);
    if (!job) {
      const row = await market.db.job.findUnique({ where: { id: jobId }, select: { status: true } });
      throw refuse.conflict({ code: "job-finished", status: row?.status ?? "unknown" }, `This job is already ${row?.status ?? "gone"}; there is nothing to cancel.`);
    }
    const now = market.clock.now();
    const charged = await market.db.$transaction(async (tx) => {
      // Running tasks end with the job; its unstarted tasks (all 10,000 of a big job, say) are
      // marked after the lock, in chunks: nothing reads a cancelled job's tasks as work.
      await tx.task.updateMany({ where: { jobId, status: "leased" }, data: { status: "failed", machineId: null } });
      await tx.lease.updateMany({ where: { task: { jobId }, status: "active" }, data: { status: "abandoned", endedAt: new Date(now) } });
      const charge = await timedSettlement(market, "cancelled", () => settleUnfinished(tx, { jobId, consumerId: job.ownerId, why: "cancelled", penaltyHeld: job.penaltyHeldMicro }));
      await tx.job.update({ where: { id: jobId }, data: { status: "cancelled", completedAt: new Date(now), chargedMicro: charge } });
      return charge;
    });
    jobEnded(market, jobId);
    market.log(`job ${jobId.slice(0, 8)} cancelled; charged ${toCredits(charged)} credits`);
    market.emit({ kind: "job", jobId, ownerId: job.ownerId });
    return { cancelled: true, charged: toCredits(charged) };
  });
  await failUnstarted(market, jobId);
  return answer;
}

/**
 * A cancelled job's tasks that never started, failed a chunk at a time outside the market's lock.
 * One statement per chunk, the chunk chosen in the database: reading the ids and sending them
 * back had the client build and compile a 1,000-value query on the market's thread (issue 16).
 */
async function failUnstarted(market: Market, jobId: string) {
  for (;;) {
    const failed = await market.db.$executeRaw`
      UPDATE "Task" SET status = 'failed', "machineId" = NULL
      WHERE id IN (SELECT id FROM "Task" WHERE "jobId" = ${jobId} AND status IN ('pending', 'queued') LIMIT ${TASK_CHUNK})`;
    if (failed === 0) return;
  }
}

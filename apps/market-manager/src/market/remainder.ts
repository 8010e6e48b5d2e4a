// The second step of a job submitted without a work estimate (costbenefit pilots.ts): once its
// pilots have finished, the engine decides on the rest of its tasks, planned from the work the
// pilots were measured to do. This file applies that decision and records it; the rule is the
// engine's. Asked from the market's tick, so a restart between the pilots and the rest loses
// nothing: the pilots' results, price and count are in the job's row (restore.ts).
import { loweredBenefit, maxBenefit, remainderEscrow, remainderMaxSpend, type BenefitCurve, type PilotRun } from "@cyclemarket/costbenefit";
import type { Market } from "./market.ts";
import type { LiveJob, LivePilots, LiveTask } from "./live.ts";
import type { Decision, JobSpec } from "./engine.ts";
import { decisionRecord, plannedBenefit } from "../tasks/jobs.ts";
import { jobDecisionEntries, recordDecisions } from "../ops/decisions.ts";
import { timedSettlement } from "../ops/ops.ts";
import { toJson } from "../db/client.ts";
import { reasonOf } from "../api/errors.ts";
import { balance, post, toCredits, toMicro } from "../ledger/ledger.ts";
import { settleUnfinished } from "../ledger/settlement.ts";
import { escrow } from "../ledger/entries.ts";
import { queueOnMachines } from "../tasks/intake.ts";
import { jobEnded, remainderAdmitted } from "./transitions.ts";
import { shortId } from "@cyclemarket/client/job-file";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { tasksFrom } from "../db/sql/task-rows.ts";

type PilotJob = LiveJob & { pilots: LivePilots };
type DecisionRecord = ReturnType<typeof decisionRecord>;

/** Jobs whose pilots have all finished and whose rest waits for the engine. */
function waiting(market: Market): PilotJob[] {
  const now = market.clock.now();
  return [...market.state.jobs.values()].filter(
    (j): j is PilotJob =>
      j.pilots?.phase === "provisional" &&
      j.status !== "delayed" &&
      j.tasksDone >= j.pilots.count &&
      j.taskCount > j.pilots.count &&
      market.engine.remainderDue(j.pilots.asked, now),
  );
}

/** Puts the rest of every job whose pilots finished to the engine, one job per step of the market's lock. */
/** The pilots' measurements of the work per task: the samples their runs on other owners' machines took (tasks/run-pay.ts). */
const pilotRuns = (job: PilotJob): PilotRun[] => job.workSamples;

/** Puts the rest of every job whose pilots finished to the engine, one job per step of the market's lock. */
export async function admitRemainders(market: Market) {
  for (const job of waiting(market)) await market.serial(() => admitRemainder(market, job.id));
}

export async function admitRemainder(market: Market, jobId: string) {
  const live = market.state.jobs.get(jobId);
  if (!live?.pilots || live.pilots.phase !== "provisional" || live.tasksDone < live.pilots.count) return;
  const job = live as PilotJob;
  const pilots = job.pilots;
  const now = market.clock.now();
  pilots.asked = market.engine.remainderAsked(pilots.asked, now);
  // Each task's input size without its input: the engine plans the network on it, as at submission.
  const rows = await runStatement(viaPrisma(market.db), tasksFrom, { jobId, fromIndex: pilots.count });
  const spec: JobSpec = {
    id: jobId,
    arrivedAt: job.arrivedAt,
    benefit: plannedBenefit(job.benefit, job.maxSpendMicro === null ? null : toCredits(job.maxSpendMicro)),
    replicas: job.replicas,
    tasks: rows.filter((r) => r.replica === 0).map((r) => ({ id: r.id, work: job.workPerTask, memoryMb: job.memoryMbPerTask, bytes: r.bytes })),
  };
  const runs = pilotRuns(job);
  const asked = market.engine.decideRemainder(spec, { count: pilots.count, runs, priceCredits: toCredits(pilots.priceMicro), terms: market.settings.terms }, job.wallMs, now);
  let decision: Decision = asked.decision;
  const pilotPrice = toCredits(pilots.priceMicro);
  const maxSpend = remainderMaxSpend(job.maxSpendMicro === null ? undefined : toCredits(job.maxSpendMicro), pilotPrice);
  // What the rest's escrow takes from the consumer's balance, beyond what the pilots' escrow spares (the engine's rule).
  const needed =
    decision.outcome === "admitted"
      ? toMicro(
          remainderEscrow({
            pricing: job.pricing,
            price: decision.price,
            maxBenefit: maxBenefit(loweredBenefit(job.benefit as BenefitCurve, pilotPrice)),
            maxSpend: job.maxSpendMicro === null ? undefined : toCredits(job.maxSpendMicro),
            pilotPrice,
            pilotEscrow: toCredits(job.escrowMicro),
          }).needed,
        )
      : 0n;
  if (decision.outcome === "admitted" && (await balance(market.db, { kind: "consumer", userId: job.ownerId })) < needed) {
    decision = { outcome: "rejected", reasons: [...decision.reasons.filter((r) => r.code === "planned-from-pilots"), { code: "insufficient-credits", needed: toCredits(needed) }] };
  }
  // The decision on the rest says how many pilots it was planned from; provisional only while it waits.
  const record = { ...decisionRecord(market, decision, job.replicas, maxSpend), pilots: pilots.count, provisional: decision.outcome === "delayed" };
  const entries = jobDecisionEntries(decision, record.reasons, { id: jobId, ownerId: job.ownerId, tasks: spec.tasks.length }, now);
  if (decision.outcome === "delayed") {
    // The consumer sees why the rest waits; the pilots' results stand meanwhile.
    await market.db.$transaction(async (tx) => {
      await recordDecisions(market, tx, entries);
      await tx.job.update({ where: { id: jobId }, data: { decision: toJson(record) } });
    });
  } else if (decision.outcome === "admitted") {
    await admit(market, job, decision, record, entries, rows, spec, asked.workPerTask, needed, now);
  } else {
    await settlePilotsAlone(market, job, record, entries, now);
  }
  market.emit({ kind: "job", jobId, ownerId: job.ownerId });
}

async function admit(
  market: Market,
  job: PilotJob,
  decision: Decision & { outcome: "admitted" },
  record: DecisionRecord,
  entries: ReturnType<typeof jobDecisionEntries>,
  rows: { id: string; index: number; replica: number; bytes: number }[],
  spec: JobSpec,
  workPerTask: number,
  needed: bigint,
  now: number,
) {
  const placed = new Map(decision.placements.map((p) => [p.taskId, p.machineId]));
  const price = job.pilots.priceMicro + toMicro(decision.price);
  await market.db.$transaction(async (tx) => {
    await recordDecisions(market, tx, entries);
    if (needed > 0n) await post(tx, escrow({ jobId: job.id, consumerId: job.ownerId, amount: needed, part: "remainder" }));
    await tx.job.update({
      where: { id: job.id },
      data: {
        decision: toJson({ ...record, price: toCredits(price), pilotPrice: toCredits(job.pilots.priceMicro), remainderPrice: decision.price }),
        workEstimate: "measured",
        workPerTask,
        // The market's own measurement stands where a consumer's estimate would.
        declaredWorkPerTask: workPerTask,
        quotedPriceMicro: price,
        escrowMicro: { increment: needed },
        expectedCompletionAt: new Date(decision.completionAt),
      },
    });
    await queueOnMachines(tx, placed);
  });
  // The pilots' price is spent: a contradicted estimate is charged it plus the rest's plan at the measured work.
  const priceAtWork = decision.priceAtWork?.map((w) => ({ ...w, price: w.price + toCredits(job.pilots.priceMicro) })) ?? null;
  Object.assign(job, { workPerTask, declaredWorkPerTask: workPerTask, priceMicro: price, priceAtWork, escrowMicro: job.escrowMicro + needed, plannedAt: decision.completionAt });
  job.pilots.phase = "measured";
  remainderAdmitted(market, job, rows, placed, spec, decision);
  market.log(`job ${shortId(job.id)}: the rest (${spec.tasks.length} tasks) admitted at ${workPerTask.toFixed(3)} s of measured work per task`);
}

/**
 * The engine did not admit the rest: the job ends with its pilots, settled for what ran (what its
 * producers were paid); the rest of the escrow goes back and the tasks that never ran are removed.
 */
async function settlePilotsAlone(market: Market, job: PilotJob, record: DecisionRecord, entries: ReturnType<typeof jobDecisionEntries>, now: number) {
  await market.db.$transaction(async (tx) => {
    await recordDecisions(market, tx, entries);
    const paid = await timedSettlement(market, "remainder-rejected", () => settleUnfinished(tx, { jobId: job.id, consumerId: job.ownerId, why: "remainder-rejected" }));
    await tx.task.deleteMany({ where: { jobId: job.id, index: { gte: job.pilots.count } } });
    await tx.job.update({
      where: { id: job.id },
      data: {
        status: "rejected",
        decision: toJson(record),
        decidedAt: new Date(now),
        completedAt: new Date(now),
        chargedMicro: paid,
        result: toJson({ error: reasonOf({ code: "remainder-rejected", pilots: job.pilots.count, tasks: job.taskCount, paidToProducers: toCredits(paid) }) }),
      },
    });
  });
  jobEnded(market, job.id);
  market.log(`job ${shortId(job.id)}: the rest was not admitted after its pilots; settled for the pilots alone`);
}

import { addedCopyPiece, leaseBudget, leaseTerm, pieceRate } from "@cyclemarket/costbenefit";
import { contradictedCharge } from "../tasks/run-pay.ts";
import type { Market } from "../market/market.ts";
import { askOf, type LiveJob, type LiveLease, type LiveMachine, type LiveTask } from "../market/live.ts";
import { toCredits, toMicro } from "../ledger/ledger.ts";

/** What a lease's terms read of its job. */
export type LeasedJob = Pick<LiveJob, "workPerTask" | "wallMs">;

/** Whether `task` runs as a pilot of its job (a job without a work estimate, its first tasks). */
export const isPilot = (job: Pick<LiveJob, "pilots"> | undefined, task: Pick<LiveTask, "index">) => job?.pilots?.phase === "provisional" && task.index < job.pilots.count;

/**
 * What the job's leases may still promise producers: the most it can be charged as things stand
 * (the engine's leaseBudget: the quote while its estimate holds, not the maxSpend its escrow holds
 * beside it; what the measured work is charged once it contradicted the estimate) less what it
 * paid, holds for late runs and its live leases promise.
 */
export function budgetLeft(market: Market, job: LiveJob): bigint {
  const budget = toMicro(
    leaseBudget({ pricing: job.pricing, price: toCredits(job.priceMicro), escrow: toCredits(job.escrowMicro), contradictedCharge: contradictedCharge(market, job) }),
  );
  return budget - job.paidMicro - job.heldMicro - market.state.leases.promised(job.id);
}

/** A task's share of its job's quote: what its copies, checks included, are paid at most (costbenefit copyPieces). */
export const taskShare = (job: Pick<LiveJob, "priceMicro" | "taskCount">) => job.priceMicro / BigInt(Math.max(1, job.taskCount));

/**
 * The terms of a lease of a live task on `machine` (leaseTermsOf with the task's job). A copy
 * verification added is paid within its task's share of the quote, so its lease states at most
 * that (the engine's addedCopyPiece).
 */
export function leaseTermsOfTask(market: Market, machine: LiveMachine, task: LiveTask, ahead: number, now: number): LeaseTerms {
  const job = market.state.jobs.get(task.jobId)!;
  const terms = leaseTermsOf(market, machine, job, isPilot(job, task), ahead, now);
  if (task.replica < job.replicas) return terms;
  const checked = market.state.copies(task).flatMap((c) => (c.replica < job.replicas && c.pieceMicro !== undefined ? [c.pieceMicro] : []));
  return { ...terms, pieceRateMicro: addedCopyPiece(terms.pieceRateMicro, checked, taskShare(job)) };
}

/** What a lease carries beside its task: fixed when it is handed out, never renewed. */
export type LeaseTerms = Pick<LiveLease, "issuedAt" | "expiresAt" | "pieceRateMicro" | "pilot" | "ahead">;

/**
 * The terms of a lease of `task` on `machine` issued `now`, with `ahead` leases held there before
 * it (the engine's leaseTerm and pieceRate): its piece rate is the machine's ask times the task's
 * work as the market knows it now; a pilot of a job without an estimate states the most it pays
 * (costbenefit pilotPay pays what the market's clock vouches for, up to that). Dedicated machines
 * are paid by their contract.
 */
export function leaseTermsOf(market: Market, machine: LiveMachine, job: LeasedJob, pilot: boolean, ahead: number, now: number): LeaseTerms {
  const t = market.settings.terms;
  const work = pilot ? undefined : job.workPerTask;
  const wallSeconds = job.wallMs / 1000;
  const { lastsSeconds } = leaseTerm(t, { work, speed: machine.speed, slots: machine.slots, ahead, wallSeconds });
  const ask = machine.kind === "opportunistic" ? askOf(machine) / 1e6 : 0;
  return {
    issuedAt: now,
    expiresAt: now + Math.round(lastsSeconds * 1000),
    pieceRateMicro: toMicro(pieceRate(ask, pilot ? t.pilotWorkCapSeconds : (work ?? 0))),
    pilot,
    ahead,
  };
}

/**
 * The latest a run of `lease` on `machine` can still end and report: its runs ahead and its own
 * at the job's wall-time limit, plus the grace (the engine's leaseTerm for a task of unknown work).
 * A lapsed lease's result may arrive until then.
 */
export function latestReportAt(market: Market, machine: LiveMachine, job: LeasedJob, lease: Pick<LiveLease, "issuedAt" | "ahead">): number {
  const { lastsSeconds } = leaseTerm(market.settings.terms, { work: undefined, speed: machine.speed, slots: machine.slots, ahead: lease.ahead, wallSeconds: job.wallMs / 1000 });
  return lease.issuedAt + Math.round(lastsSeconds * 1000);
}

import type { LiveJob } from "../market/live.ts";

/**
 * What a job whose measured work contradicted its estimate is charged before the consumer's
 * maxSpend caps it: the quoted price scaled by the measured work over the declared.
 */
export function contradictedCharge(job: Pick<LiveJob, "declaredWorkPerTask">, price: number, measured: number): number {
  const declared = Math.max(job.declaredWorkPerTask, 1e-9);
  return price * Math.max(1, measured / declared);
}

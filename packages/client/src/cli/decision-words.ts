import type { Reason } from "../job-file/index.ts";

// The CLI's words for the market's decisions and failures: the reasons a consumer meets when a
// job is delayed, rejected or fails. Codes not listed here print as their code and numbers.

const num = (r: Reason, k: string) => (typeof r[k] === "number" ? Number((r[k] as number).toFixed(4)) : "?");

const WORDS: Record<string, (r: Reason) => string> = {
  profitable: (r) => `its benefit (${num(r, "benefit")} credits) beats the marginal cost (${num(r, "marginalCost")} credits)`,
  unprofitable: (r) => `its benefit at the best completion (${num(r, "benefit")} credits) does not beat the marginal cost of running it (${num(r, "marginalCost")} credits)`,
  "always-admit": (r) => `its benefit (${num(r, "benefit")}) exceeds the highest possible cost (${num(r, "highestPossibleCost")})`,
  "no-machines": () => "no machines are selling cycles right now",
  "no-feasible-machine": () => "no machine can run a task in time (memory, departure or deadline)",
  "cannot-become-profitable": (r) => `even at the earliest completion its benefit (${num(r, "benefitAtEarliest")}) is below the lowest possible cost (${num(r, "lowestPossibleCost")})`,
  "max-wait-exceeded": (r) => `it waited ${num(r, "waitedSeconds")} s, past the ${num(r, "maxDelaySeconds")} s a job may wait`,
  "waited-too-long": (r) => `it waited ${num(r, "waitedMs")} ms, past the ${num(r, "maxDelayMs")} ms a job may wait`,
  "insufficient-credits": (r) =>
    `it needs ${num(r, "needed")} credits in escrow${r.price !== undefined ? ` (it would cost ${num(r, "price")})` : ""} and your balance is${r.balance !== undefined ? ` ${num(r, "balance")} credits` : " less"}${r.missing !== undefined ? `: ${num(r, "missing")} missing` : ""}`,
  "escrow-exhausted": () => "its escrow could not pay for another run",
  "no-quorum": () => "the replicas' outputs never agreed on a majority",
  "nonzero-exit": (r) => `a task's program exited with status ${num(r, "exitCode")} on every attempt`,
  cancelled: () => "it was cancelled",
  "pilot-tasks": (r) =>
    `provisional: priced after ${num(r, "pilots")} pilot tasks${r.atMost != null ? `, at most ${num(r, "atMost")} credits` : ""} (it gave no work per task, so the pilots are priced at ${num(r, "provisionalWorkPerTask")} s of reference work each)`,
  "planned-from-pilots": (r) => `the rest was planned from its ${num(r, "pilots")} pilots at ${num(r, "measuredWorkPerTask")} s of reference work per task`,
  "remainder-rejected": (r) => `only its ${num(r, "pilots")} pilot tasks ran: the rest was not admitted, and it was charged what they cost (${num(r, "paidToProducers")} credits)`,
};

export function describeDecisionReason(r: Reason): string {
  const words = WORDS[r.code];
  if (words) return words(r);
  const details = Object.entries(r)
    .filter(([k]) => k !== "code")
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
    .join(", ");
  return details ? `${r.code} (${details})` : r.code;
}

/**
 * The smallest benefit the market would admit now, read from the decision's reasons: the
 * marginal cost it would have to beat. Null when the reasons do not say.
 */
export function smallestAdmittedBenefit(reasons: Reason[]): number | null {
  const costs = reasons.flatMap((r) => (typeof r.marginalCost === "number" ? [r.marginalCost] : typeof r.lowestPossibleCost === "number" ? [r.lowestPossibleCost] : []));
  return costs.length ? Math.max(...costs) : null;
}

import type { MarketReason, MarketReasonCode, MarketReasonOf } from "@cyclemarket/costbenefit";

// The CLI's words for the market's decisions and failures: the reasons a consumer meets when a
// job is delayed, rejected or fails. Each is given its code's fields as the market's vocabulary
// types them (a renamed field does not compile); codes not listed print as their code and numbers.

const num = (v: number) => Number(v.toFixed(4));

const WORDS: { [C in MarketReasonCode]?: (r: MarketReasonOf<C>) => string } = {
  profitable: (r) => `its benefit (${num(r.benefit)} credits) beats the marginal cost (${num(r.marginalCost)} credits)`,
  unprofitable: (r) => `its benefit at the best completion (${num(r.benefit)} credits) does not beat the marginal cost of running it (${num(r.marginalCost)} credits)`,
  "always-admit": (r) => `its benefit (${num(r.benefit)}) exceeds the highest possible cost (${num(r.highestPossibleCost)})`,
  "no-machines": () => "no machines are selling cycles right now",
  "no-feasible-machine": () => "no machine can run a task in time (memory, departure or deadline)",
  "cannot-become-profitable": (r) => `even at the earliest completion its benefit (${num(r.benefitAtEarliest)}) is below the lowest possible cost (${num(r.lowestPossibleCost)})`,
  "max-wait-exceeded": (r) => `it waited ${num(r.waitedSeconds)} s, past the ${num(r.maxDelaySeconds)} s a job may wait`,
  "waited-too-long": (r) => `it waited ${num(r.waitedMs)} ms, past the ${num(r.maxDelayMs)} ms a job may wait`,
  "insufficient-credits": (r) =>
    `it needs ${num(r.needed)} credits in escrow${r.price !== undefined ? ` (it would cost ${num(r.price)})` : ""} and your balance is${r.balance !== undefined ? ` ${num(r.balance)} credits` : " less"}${r.missing !== undefined ? `: ${num(r.missing)} missing` : ""}`,
  "escrow-exhausted": () => "its escrow could not pay for another run",
  "no-quorum": () => "the replicas' outputs never agreed on a majority",
  "pilot-tasks": (r) =>
    `provisional: priced after ${num(r.pilots)} pilot tasks${r.atMost != null ? `, at most ${num(r.atMost)} credits` : ""} (it gave no work per task, so the pilots are priced at ${num(r.provisionalWorkPerTask)} s of reference work each)`,
  "planned-from-pilots": (r) => `the rest was planned from its ${num(r.pilots)} pilots at ${num(r.measuredWorkPerTask)} s of reference work per task`,
  "remainder-rejected": (r) => `only its ${num(r.pilots)} pilot tasks ran: the rest was not admitted, and it was charged what they cost (${num(r.paidToProducers)} credits)`,
  "needs-more-machines": (r) => `each task runs as ${r.replicas} copies on machines of different owners, and ${r.ownersConnected} owners have machines connected`,
};

export function describeDecisionReason(r: MarketReason): string {
  const words = WORDS[r.code] as ((r: MarketReason) => string) | undefined;
  if (words) return words(r);
  const details = Object.entries(r)
    .filter(([k]) => k !== "code")
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
    .join(", ");
  return details ? `${r.code} (${details})` : r.code;
}

/** Why a task's last run failed: the sandbox's failure, the program's exit code, or the job's limit. */
export function failureCauseWords(r: MarketReasonOf<"task-failed">): string {
  const cause = r.cause;
  if (cause == null) return "it failed";
  if (cause === "failure-limit") return "the job reached its limit of tasks whose failure machines of other owners reproduced";
  if (cause === "no-quorum") return "the replicas' outputs never agreed on a majority";
  if (cause === "nonzero-exit" || cause.startsWith("exit:")) return `its program exited with status ${r.exitCode ?? cause.slice("exit:".length)} on every attempt`;
  return `the sandbox stopped it (${cause})`;
}

/**
 * The smallest benefit the market would admit now, read from the decision's reasons: the
 * marginal cost it would have to beat. Null when the reasons do not say.
 */
export function smallestAdmittedBenefit(reasons: MarketReason[]): number | null {
  const costs = reasons.flatMap((r) => (r.code === "unprofitable" || r.code === "profitable" || r.code === "always-admit" || r.code === "no-admission-control" ? [r.marginalCost] : r.code === "cannot-become-profitable" ? [r.lowestPossibleCost] : []));
  return costs.length ? Math.max(...costs) : null;
}

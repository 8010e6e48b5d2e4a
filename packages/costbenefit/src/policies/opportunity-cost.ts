// `opportunity-cost`: the Millennium cluster's market-based proportional share (the Millennium paper). A job
// states a rate b in credits per minute; on a contended machine the jobs share it in proportion
// to their rates and each pays its rate per minute it runs there; a job alone on a slot runs free
// (it displaces nobody, so it costs nobody anything: the opportunity cost is zero). A new job goes
// to the node where its rate buys the most (the lowest-price node, price = sum of rates there).
//
// The rate comes from the curve (job-terms.ts): b = 30 x V / W credits per speed-1 minute of its
// work, i.e. half its value per minute, so a job can afford to run its whole length at half a
// slot. The consumer will not pay more than V: a job whose expected charge (its rate over the
// minutes it would run contended, at its share) exceeds V waits for contention to fall, and is
// rejected once it has waited the maximum. Millennium itself admits everything; this is the
// budget check its users would make by hand.
//
// How the market approximates it: producers time-share a slot equally (a Web Worker or worker
// thread has no priority to weight), so the share in proportion to b is not enforced inside a
// slot; it decides where each task goes (where b / (b + price) x speed is highest, so high rates
// avoid crowded machines) and what it is charged. The live ledger still settles b(j, t) from
// escrow; the rate and the expected charge are reported in the decision's reason.
import type { Job } from "../job.ts";
import type { Chooser } from "../pipeline/plan.ts";
import type { JobTerms } from "./job-terms.ts";
import { hostSums, progressChooser, type Chosen } from "./host-bids.ts";
import type { Policy } from "./types.ts";
import type { PolicyProfile } from "./profile.ts";
import { admitted } from "./outcomes.ts";
import { buildSharePolicy, planJob, waitOrReject, type ShareCall } from "./share.ts";

/** Credits per minute the job bids: half its value per speed-1 minute of its work. */
export function ratePerMinute(terms: JobTerms): number {
  return terms.work > 0 ? (30 * terms.value) / terms.work : 0;
}

function chooser(call: ShareCall, jobId: string, picked: Chosen[]): Chooser {
  const rate = ratePerMinute(call.termsOf(jobId));
  return progressChooser(call, rate, hostSums(call, (id) => ratePerMinute(call.termsOf(id))), picked);
}

function decide(call: ShareCall, job: Job, terms: JobTerms) {
  const rate = ratePerMinute(terms);
  const picked: Chosen[] = [];
  const sums = hostSums(call, (id) => (id === job.id ? 0 : ratePerMinute(call.termsOf(id))));
  const r = planJob(call, job, progressChooser(call, rate, sums, picked));
  if (!r.ok) return waitOrReject(call, job, r.reason);
  let charge = 0;
  let price = 0;
  let share = 1;
  for (const c of picked) {
    price = Math.max(price, c.price);
    share = Math.min(share, c.share);
    // Free alone; under contention, b per minute for as long as the task runs at its share.
    if (!c.alone) charge += (rate * (c.work / c.progress)) / 60;
  }
  if (charge > terms.value) return waitOrReject(call, job, { code: "over-budget", expectedCharge: charge, budget: terms.value });
  return admitted(call.state, job, r.plan, call.now, [{ code: "opportunity-cost", ratePerMinute: rate, nodePricePerMinute: price, share, expectedCharge: charge }]);
}

export function buildOpportunityCostPolicy(name: string, profile: PolicyProfile): Policy {
  return buildSharePolicy(name, profile, { decide, chooser: (call, jobId) => chooser(call, jobId, []) });
}

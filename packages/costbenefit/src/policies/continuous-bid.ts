// `continuous-bid`: Tycoon's continuous bids (the Tycoon paper). A job bids (budget b, interval t): on a
// machine its share is (b/t) / sum(b/t) over the bids there; it pays its rate b/t only for the
// seconds it actually runs (it pays nothing while waiting or once done); its bidding agent
// recomputes the bids every few seconds and moves its bid where its share buys more (best
// response).
//
// The bid comes from the curve (job-terms.ts): b = V (the most it pays), t = the interval before
// its benefit starts to fall (slack x its longest task if it never falls). So the budget covers
// exactly the runs that finish within the interval: a job whose expected charge (rate x run
// seconds at its best-response share) exceeds b waits, and is rejected after the maximum wait.
//
// How the market approximates it: slots are time-shared equally by the producers, so the share
// is not enforced inside a slot; it decides where each task goes (the machine where it
// progresses fastest with its bid) and what it is charged. Rebidding happens at the policy's
// tick (every few seconds in the live market and the simulator): a task moves when another
// machine gives it more progress by the profile's minimum gain. The simulator moves running tasks
// too (moveRunning); the live market only moves queued ones, since a WebAssembly run cannot
// migrate between browsers. The live ledger still settles b(j, t) from escrow; the bid and the
// expected charge are reported in the decision's reason.
import type { Move } from "../decision.ts";
import type { Job } from "../job.ts";
import { infeasibility, type Estimate } from "../pipeline/feasibility.ts";
import type { JobTerms } from "./job-terms.ts";
import { hostSums, progressChooser, shareOn, type Chosen } from "./host-bids.ts";
import type { Policy } from "./types.ts";
import type { PolicyProfile } from "./profile.ts";
import { admitted } from "./outcomes.ts";
import { buildSharePolicy, planJob, unboundedContext, waitOrReject, type ShareCall } from "./share.ts";

/** The bid's rate b/t in credits per second. */
export function bidPerSecond(terms: JobTerms): number {
  return terms.intervalSeconds > 0 ? terms.value / terms.intervalSeconds : terms.value;
}

function decide(call: ShareCall, job: Job, terms: JobTerms) {
  const bid = bidPerSecond(terms);
  const picked: Chosen[] = [];
  const sums = hostSums(call, (id) => (id === job.id ? 0 : bidPerSecond(call.termsOf(id))));
  const r = planJob(call, job, progressChooser(call, bid, sums, picked));
  if (!r.ok) return waitOrReject(call, job, r.reason);
  let charge = 0;
  let hostBids = 0;
  let share = 1;
  for (const c of picked) {
    // Pays its rate for the seconds it runs, alone or not.
    charge += (bid * c.work) / c.progress;
    hostBids = Math.max(hostBids, c.price);
    share = Math.min(share, c.share);
  }
  if (charge > terms.value * (1 + 1e-9)) return waitOrReject(call, job, { code: "over-budget", expectedCharge: charge, budget: terms.value });
  return admitted(call.state, job, r.plan, call.now, [
    { code: "continuous-bid", budget: terms.value, intervalSeconds: terms.intervalSeconds, bidPerSecond: bid, hostBidsPerSecond: hostBids, share, expectedCharge: charge },
  ]);
}

/** The bidding agent's best response, recomputed at each tick: move where the share buys more. */
function moves(call: ShareCall): Move[] {
  const { state, profile } = call;
  const rule = profile.migration;
  if (rule.maxMovesPerTick === 0 || state.machineCount < 2) return [];
  const m = state.machines;
  const bidOf = (id: string) => bidPerSecond(call.termsOf(id));
  const sums = hostSums(call, bidOf);
  const busy = new Int32Array(m.end);
  const sources: number[] = [];
  for (let s = 0; s < m.end; s++) {
    if (!m.live(s)) continue;
    busy[s] = m.i.running[s]! + m.i.queued[s]!;
    if (busy[s]! > m.f.slots[s]!) sources.push(s);
  }
  // The most contended machines first: price per unit of capacity.
  sources.sort((a, b) => sums[b]! / m.f.capacity[b]! - sums[a]! / m.f.capacity[a]! || a - b);
  const ctx = unboundedContext(call);
  const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
  const out: Move[] = [];
  const touched = new Set<number>();
  for (const src of sources.slice(0, 4 * rule.maxMovesPerTick)) {
    if (out.length >= rule.maxMovesPerTick) break;
    if (touched.has(src)) continue;
    let best: { t: string; to: number; bid: number; before: number; after: number } | undefined;
    for (const t of state.tasksOn(src)) {
      if (t.running && !rule.moveRunning) continue;
      const bid = bidOf(t.jobId);
      const before = shareOn(state, src, bid, sums[src]! - bid, busy[src]! - 1).progress;
      for (let s = 0; s < m.end; s++) {
        if (s === src || !m.live(s) || touched.has(s)) continue;
        const after = shareOn(state, s, bid, sums[s]!, busy[s]!).progress;
        if (after <= before * (1 + rule.minGain) || (best && after / before <= best.after / best.before)) continue;
        if (infeasibility(ctx, s, t, Infinity, undefined, est)) continue;
        best = { t: t.id, to: s, bid, before, after };
      }
    }
    if (!best) continue;
    sums[src]! -= best.bid;
    sums[best.to]! += best.bid;
    busy[src]!--;
    busy[best.to]!++;
    touched.add(src).add(best.to);
    out.push({ taskId: best.t, fromMachineId: m.ids[src]!, toMachineId: m.ids[best.to]!, reasons: [{ code: "rebid", progressBefore: best.before, progressAfter: best.after }] });
  }
  return out;
}

export function buildContinuousBidPolicy(name: string, profile: PolicyProfile): Policy {
  return buildSharePolicy(name, profile, {
    decide,
    chooser: (call, jobId) => progressChooser(call, bidPerSecond(call.termsOf(jobId)), hostSums(call, (id) => bidPerSecond(call.termsOf(id))), []),
    moves,
  });
}

// `reservation`: Sharc's reservations (the Sharc paper). A job reserves a fraction of the pool's compute;
// it is admitted only while the sum of reservations fits the pool (sum R <= capacity); each of its
// tasks (Sharc's capsules) goes to the machine it fits most tightly (best fit); and reservation a
// task leaves unused is traded among the tasks of the same job, not given back to the pool.
//
// The reservation comes from the job's work and its curve (job-terms.ts): R = W / D work units per
// second, the rate that finishes its work W by the interval D before its benefit falls; as a
// fraction of the pool, R / capacity. Each task reserves R x w / W on its machine, which must
// deliver it from one slot (w / D <= speed) and keep the machine's reservations within its
// capacity; among machines with a free slot first, since a live slot runs one task at a time.
// A job with a task no machine can fit, or with more than the bookable pool, is
// rejected at once; one that fits the pool but not now waits for reservations to end.
//
// Lending: a job keeps R until its last task finishes; while it runs, its remaining tasks split R
// in proportion to their work, so what a finished task reserved passes to its siblings' machines
// instead of back to the pool. The live market and the simulator time-share slots equally, so a
// reservation is an admission and placement rule: it is not enforced as a CPU rate inside a slot.
import type { Job } from "../job.ts";
import type { Reason } from "../reasons.ts";
import type { Chooser } from "../pipeline/plan.ts";
import { scanChooser } from "./placement.ts";
import type { JobTerms } from "./job-terms.ts";
import type { Policy } from "./types.ts";
import type { PolicyProfile } from "./profile.ts";
import { admitted } from "./outcomes.ts";
import { buildSharePolicy, planJob, waitOrReject, type ShareCall } from "./share.ts";

/** Work units per second the job reserves. */
export function reservedRate(terms: JobTerms): number {
  return terms.work / Math.max(1e-9, terms.intervalSeconds);
}

interface Book {
  /** Reserved work units per second on each machine row (with lending). */
  perMachine: Float64Array;
  /** Sum over jobs in the market of their reservations. */
  total: number;
  capacity: number;
}

function reservations(call: ShareCall, skipJob?: string): Book {
  const m = call.state.machines;
  const perMachine = new Float64Array(m.end);
  let capacity = 0;
  for (let s = 0; s < m.end; s++) if (m.live(s) && m.f.available[s] === 1) capacity += m.f.capacity[s]!;
  let total = 0;
  const rate = new Map<string, number>();
  for (const id of call.loads.keys()) {
    if (id === skipJob) continue;
    const r = reservedRate(call.termsOf(id));
    rate.set(id, r);
    total += r;
  }
  for (const t of call.state.tasks.values()) {
    const r = rate.get(t.jobId);
    if (r === undefined) continue;
    // Lending: the job's remaining tasks share its whole reservation by their work.
    perMachine[t.machine]! += (r * t.work) / Math.max(1e-9, call.loads.get(t.jobId)!.work);
  }
  return { perMachine, total, capacity };
}

/** The feasible machine with the least spare reservation left after the task's (best fit). */
function bestFit(call: ShareCall, book: Book, jobRate: number, jobWork: number, failed: { reason?: Reason }): Chooser {
  const bookable = call.profile.terms.bookable;
  let rho = 0;
  let largestSpare = 0;
  const scan = scanChooser((ctx, s, _task, est) => {
    const f = ctx.state.machines.f;
    const spareBefore = bookable * f.capacity[s]! - book.perMachine[s]!;
    // One task runs on one slot: it can be given at most one slot's speed.
    const room = Math.min(spareBefore, f.speed[s]!);
    largestSpare = Math.max(largestSpare, room);
    if (rho > room + 1e-12) return null;
    // Best fit among machines with a free slot first: a live slot runs one task, so a task
    // queued behind others would get none of its reserved rate until a slot frees.
    return spareBefore - rho + (est.startsNow ? 0 : 1e15);
  });
  return (ctx, task, deadlineAt, excluded, why) => {
    rho = (jobRate * task.work) / Math.max(1e-9, jobWork);
    largestSpare = 0;
    const c = scan(ctx, task, deadlineAt, excluded, why);
    if (!c) {
      failed.reason = { code: "reservation-unplaceable", taskId: task.id, ratePerSecond: rho, largestSpare };
      return undefined;
    }
    book.perMachine[c.row]! += rho;
    return c;
  };
}

function decide(call: ShareCall, job: Job, terms: JobTerms) {
  const rate = reservedRate(terms);
  const book = reservations(call, job.id);
  const bookable = call.profile.terms.bookable;
  const fraction = rate / book.capacity;
  const data = { fraction, reservedFraction: book.total / book.capacity, bookableFraction: bookable };
  const fastest = call.state.aggregates().maxSpeed;
  // Each task reserves w / D, which one slot of the fastest machine must be able to deliver.
  const slotTooSmall = job.tasks.some((t) => t.work / Math.max(1e-9, terms.intervalSeconds) > fastest);
  if (fraction > bookable || slotTooSmall) {
    const why: Reason = slotTooSmall
      ? { code: "reservation-unplaceable", taskId: job.tasks[0]!.id, ratePerSecond: rate, largestSpare: fastest }
      : { code: "reservations-full", ...data };
    return waitOrReject(call, job, why, true);
  }
  if (book.total + rate > bookable * book.capacity) return waitOrReject(call, job, { code: "reservations-full", ...data });
  const failed: { reason?: Reason } = {};
  const r = planJob(call, job, bestFit(call, book, rate, terms.work, failed));
  if (!r.ok) return waitOrReject(call, job, failed.reason ?? r.reason);
  return admitted(call.state, job, r.plan, call.now, [{ code: "reservation", ...data }]);
}

export function buildReservationPolicy(name: string, profile: PolicyProfile): Policy {
  return buildSharePolicy(name, profile, {
    decide,
    chooser: (call, jobId) => {
      const t = call.termsOf(jobId);
      // A returned task keeps its share of its job's reservation: do not count the job twice.
      return bestFit(call, reservations(call), reservedRate(t), Math.max(1e-9, call.loads.get(jobId)?.work ?? t.work), {});
    },
  });
}

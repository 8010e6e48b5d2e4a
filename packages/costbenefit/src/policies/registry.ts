// Every policy the market and the simulator know, by name, as profiles (data).
import type { PolicyProfileInput } from "./profile.ts";

export const POLICY_PROFILES = {
  // the Java Market paper: admission by cost-benefit, cheapest placement, queued tasks rebalanced to idle slots.
  miserly: { admission: "miserly", placement: "marginal-cost", migration: { rule: "rebalance", moveRunning: false } },
  // the Java Market paper section 6: the system-friendly strategy without admission control (E-PVM) ...
  "e-pvm": { admission: "admit-all", placement: "marginal-cost" },
  // ... and the same with queued work moving to machines as they fall back within bounds
  // (E-Mosix; the Java Market paper section 6, issue 3: "periodic migration of queued work").
  "e-mosix": { admission: "admit-all", placement: "marginal-cost", holdBeyondBounds: true, migration: { rule: "rebalance", moveRunning: false } },
  // Baselines: PVM's round robin, Mosix-like least-loaded with load-balancing migration and
  // memory ushering (a strong baseline: it sees the same work estimates), random, and FCFS.
  pvm: { admission: "admit-all", placement: "round-robin" },
  mosix: { admission: "admit-all", placement: "least-loaded", migration: { rule: "load", moveRunning: true } },
  random: { admission: "admit-all", placement: "random" },
  fcfs: { admission: "admit-all", placement: "earliest-finish" },
  // The share policies (each in its own file, job parameters derived in job-terms.ts):
  // the Computational Co-op paper's Computational Co-op: a free slot to the least r/t, non-preemptive, p_max;
  tickets: { admission: "tickets", placement: "free-slot", migration: { rule: "least-usage", moveRunning: false } },
  // the Millennium paper's Millennium: rates per minute, free alone, lowest-price node;
  "opportunity-cost": { admission: "opportunity-cost", placement: "lowest-price" },
  // the Tycoon paper's Tycoon: bids (budget, interval), best response, rebid at each tick;
  "continuous-bid": { admission: "continuous-bid", placement: "best-response", migration: { rule: "best-response", moveRunning: true } },
  // the Sharc paper's Sharc: reservations within the pool, best-fit placement, lending within a job.
  reservation: { admission: "reservation", placement: "best-fit" },
} as const satisfies Record<string, PolicyProfileInput>;

export type PolicyName = keyof typeof POLICY_PROFILES;
export const POLICY_NAMES = Object.keys(POLICY_PROFILES) as PolicyName[];

export function isPolicyName(name: string): name is PolicyName {
  return Object.hasOwn(POLICY_PROFILES, name);
}

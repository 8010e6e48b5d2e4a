// One small interface for every policy (DESIGN.md "The policy lab"), built from a profile.
import type { Decision, OfferDecision, Replacement, TickResult } from "../decision.ts";
import type { DedicatedOfferInput } from "../machine.ts";
import type { Job, PendingTask } from "../job.ts";
import type { Rng } from "../rng.ts";
import type { MarketState } from "../state/market-state.ts";
import { createContext } from "../pipeline/context.ts";
import { buildPlan } from "../pipeline/plan.ts";
import { admitAll, miserlyAdmit } from "./admission.ts";
import { migrationMoves } from "./migration.ts";
import { considerDedicatedOffer } from "./offer.ts";
import { chooserFor } from "./placement.ts";
import { buildContinuousBidPolicy } from "./continuous-bid.ts";
import { buildOpportunityCostPolicy } from "./opportunity-cost.ts";
import { PolicyProfile, SHARE_RULES, type PolicyProfileInput, type ShareRule } from "./profile.ts";
import { buildReservationPolicy } from "./reservation.ts";
import { buildTicketsPolicy } from "./tickets.ts";
import { POLICY_PROFILES, isPolicyName, type PolicyName } from "./registry.ts";

export interface Policy {
  readonly name: string;
  readonly profile: PolicyProfile;
  /** Decide on a job arriving (or a delayed job re-evaluated). Never mutates the state. */
  admit(state: MarketState, job: Job, now: number, rng: Rng): Decision;
  /** The same computation shown to a consumer before submitting: nothing is committed. */
  quote(state: MarketState, job: Job, now: number, rng: Rng): Decision;
  /** Re-place admitted tasks that came back from a departed machine (no admission). */
  place(state: MarketState, tasks: readonly PendingTask[], now: number, rng: Rng): Replacement;
  /** Periodic work: delayed jobs to re-evaluate or reject, and moves of placed tasks. */
  tick(state: MarketState, now: number, rng: Rng): TickResult;
  /**
   * Accept or reject a dedicated machine's offer at once; `budget` is what the market can still
   * commit to contracts from its reserve and earnings (credits).
   */
  considerDedicatedOffer(state: MarketState, offer: DedicatedOfferInput, now: number, budget?: number): OfferDecision;
}

export function createPolicy(name: PolicyName | string, overrides: Partial<PolicyProfileInput> = {}): Policy {
  if (!isPolicyName(name)) throw new Error(`unknown policy ${name}`);
  const base = POLICY_PROFILES[name] as PolicyProfileInput;
  const migration = base.migration || overrides.migration ? { migration: { rule: "none", ...base.migration, ...overrides.migration } } : {};
  const profile = PolicyProfile.parse({ ...base, ...overrides, ...migration });
  return buildPolicy(name, profile);
}

const SHARE_BUILDERS: Record<ShareRule, (name: string, profile: PolicyProfile) => Policy> = {
  tickets: buildTicketsPolicy,
  "opportunity-cost": buildOpportunityCostPolicy,
  "continuous-bid": buildContinuousBidPolicy,
  reservation: buildReservationPolicy,
};

export function buildPolicy(name: string, profile: PolicyProfile): Policy {
  const share = (SHARE_RULES as readonly string[]).includes(profile.admission) ? SHARE_BUILDERS[profile.admission as ShareRule] : undefined;
  if (share) return share(name, profile);
  const admit = (state: MarketState, job: Job, now: number, rng: Rng): Decision => {
    const choose = chooserFor(profile.placement, rng);
    return profile.admission === "miserly" ? miserlyAdmit(state, job, now, choose, profile) : admitAll(state, job, now, choose, profile, name);
  };
  return {
    name,
    profile,
    admit,
    quote: admit,
    place(state, tasks, now, rng) {
      const out: Replacement = { placements: [], unplaced: [] };
      if (tasks.length === 0) return out;
      const ctx = createContext(state, now, profile.minReputation);
      ctx.bounded = false;
      const choose = chooserFor(profile.placement, rng);
      // One plan for all returned tasks so they spread instead of piling on one machine.
      const groups = [...tasks].sort((a, b) => b.work - a.work).map((t) => [t]);
      const r = buildPlan(ctx, groups, Infinity, choose);
      if (r.ok) return { placements: r.plan.placements, unplaced: [] };
      // Place one by one so one impossible task does not hold the others back.
      for (const t of tasks) {
        const one = buildPlan(ctx, [[t]], Infinity, choose);
        if (one.ok) out.placements.push(...one.plan.placements);
        else out.unplaced.push({ task: t, reasons: [one.reason] });
      }
      return out;
    },
    tick(state, now) {
      const reevaluate: string[] = [];
      const reject: TickResult["reject"] = [];
      const maxDelay = state.settings.maxDelaySeconds;
      for (const d of state.delayed.values()) {
        const waited = now - d.job.arrivedAt;
        if (waited >= maxDelay) reject.push({ jobId: d.job.id, reasons: [{ code: "max-wait-exceeded", waitedSeconds: waited, maxDelaySeconds: maxDelay }] });
        else if (d.epoch < state.epoch) reevaluate.push(d.job.id);
      }
      return { reevaluate, reject, moves: migrationMoves(state, now, profile) };
    },
    considerDedicatedOffer,
  };
}

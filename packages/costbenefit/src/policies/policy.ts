// Policies built from profiles (docs/DESIGN.md "The policy lab"): the market's own rules here, the
// share policies by their own builders; every profile is checked when a policy is built.
import { z } from "zod";
import type { Decision, Replacement } from "../decision.ts";
import type { Job } from "../job.ts";
import type { Rng } from "../rng.ts";
import type { MarketState } from "../state/market-state.ts";
import { createContext } from "../pipeline/context.ts";
import { buildPlan } from "../pipeline/plan.ts";
import { admitAll } from "./admit-all.ts";
import { miserlyAdmit } from "./miserly.ts";
import { migrationMoves } from "./migration.ts";
import { reviewDelayed } from "./outcomes.ts";
import { considerDedicatedOffer } from "./purchase.ts";
import { chooserFor } from "./placement.ts";
import { buildContinuousBidPolicy } from "./continuous-bid.ts";
import { buildOpportunityCostPolicy } from "./opportunity-cost.ts";
import { PolicyProfile, SHARE_RULES, type PolicyProfileInput, type ShareRule } from "./profile.ts";
import { buildReservationPolicy } from "./reservation.ts";
import { buildTicketsPolicy } from "./tickets.ts";
import { POLICY_PROFILES, isPolicyName, type PolicyName } from "./registry.ts";
import type { Policy } from "./types.ts";

export type { Policy } from "./types.ts";

export function createPolicy(name: PolicyName | string, overrides: Partial<PolicyProfileInput> = {}): Policy {
  if (!isPolicyName(name)) throw new Error(`unknown policy ${name}`);
  const base = POLICY_PROFILES[name] as PolicyProfileInput;
  const migration = base.migration || overrides.migration ? { migration: { rule: "none" as const, ...base.migration, ...overrides.migration } } : {};
  return buildPolicy(name, parseProfile(name, { ...base, ...overrides, ...migration }));
}

/**
 * The policy as a live market runs it. Rebalancing moves a queued task whenever that lowers the
 * total cost without finishing later (docs/DESIGN.md "Rebalancing"): the lab's default minimum
 * gain of 10% would keep an idle machine idle next to a long queue, because with an hour's horizon
 * the costs of a few seconds of backlog differ by far less than that. The lab and the simulator
 * keep the profiles as the papers give them.
 */
export function createLivePolicy(name: PolicyName | string): Policy {
  const base = createPolicy(name);
  return base.profile.migration.rule === "rebalance" ? createPolicy(name, { migration: { ...base.profile.migration, minGain: 0 } }) : base;
}

const SHARE_BUILDERS: Record<ShareRule, (name: string, profile: PolicyProfile) => Policy> = {
  tickets: buildTicketsPolicy,
  "opportunity-cost": buildOpportunityCostPolicy,
  "continuous-bid": buildContinuousBidPolicy,
  reservation: buildReservationPolicy,
};

/** The profile, or an error that names the policy and says in words what is wrong with it. */
function parseProfile(name: string, input: unknown): PolicyProfile {
  const r = PolicyProfile.safeParse(input);
  if (!r.success) throw new Error(`policy ${name}: ${z.prettifyError(r.error)}`);
  return r.data;
}

export function buildPolicy(name: string, input: PolicyProfile): Policy {
  // Checked here too: a profile built by hand may skip createPolicy.
  const profile = parseProfile(name, input);
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
      const { reject, changed } = reviewDelayed(state, now);
      return { reevaluate: changed.map((d) => d.job.id), reject, moves: migrationMoves(state, now, profile) };
    },
    considerDedicatedOffer,
  };
}

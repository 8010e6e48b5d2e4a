// One small interface for every policy (docs/DESIGN.md "The policy lab"). Its own file so that the
// policies and the builder that picks among them depend on it, not on each other.
import type { Decision, OfferDecision, Replacement, TickResult } from "../decision.ts";
import type { DedicatedOfferInput } from "../machine.ts";
import type { Job, PendingTask } from "../job.ts";
import type { Rng } from "../rng.ts";
import type { MarketState } from "../state/market-state.ts";
import type { AccountCeiling } from "../contract-ceiling.ts";
import type { PolicyProfile } from "./profile.ts";

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
   * commit to contracts from its reserve and earnings (credits); `account`, the offering account's
   * contract ceiling and what its live contracts still promise it.
   */
  considerDedicatedOffer(state: MarketState, offer: DedicatedOfferInput, now: number, budget?: number, account?: AccountCeiling): OfferDecision;
}

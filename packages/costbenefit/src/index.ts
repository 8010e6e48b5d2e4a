// The public API of @cyclemarket/costbenefit: the pure cost-benefit engine, the policy lab and
// the simulator. Everything else in this package is internal.

// Benefit curves (the Java Market paper, 4.2)
export { BenefitCurve, benefitAt, cappedBenefit, maxBenefit, minBenefit, breakpoints, MAX_CREDITS, MAX_SECONDS, MAX_POINTS } from "./benefit.ts";
// Costs (the Java Market paper, 4.1 and 4.3)
export { resourceCost, resourceMarginalCost, marginalCost, resourceCostSlopeLn, unitsToCredits, expectedPayment, defaultPriceConstant } from "./cost.ts";
export type { MarginalCost, MarginalCostInput } from "./cost.ts";
// Inputs and outputs, one zod schema and its type under one name
export { MachineProfile, OpportunisticMachine, DedicatedMachine, DedicatedOffer, UNMEASURED_BANDWIDTH } from "./machine.ts";
export type { MachineProfileInput } from "./machine.ts";
export { Job, TaskDemand, PendingTask } from "./job.ts";
export type { JobInput } from "./job.ts";
export { MarketSettings } from "./settings.ts";
export type { MarketSettingsInput } from "./settings.ts";
export { Reason, Exclusions, OfferRefusal } from "./reasons.ts";
export type { ReasonCode } from "./reasons.ts";
export { Decision, Admitted, Delayed, Rejected, Placement, WorkPrice, Replacement, Move, TickResult, OfferDecision } from "./decision.ts";
// The live state and how decisions change it
export { MarketState } from "./state/market-state.ts";
export type { MachineView, DelayedJob, StateSeen } from "./state/market-state.ts";
export { commitDecision, commitReplacement } from "./commit.ts";
// Policies
export { createPolicy, createLivePolicy, buildPolicy } from "./policies/policy.ts";
export { contractCeiling, contractOverStanding, CONTRACT_CEILING_NEW, CONTRACT_CEILING_CONFIRMED, CONTRACT_CEILING_PER_RESULT, CONTRACT_CEILING_AGE_DAYS } from "./policies/purchase.ts";
export type { ContractStanding } from "./policies/purchase.ts";
export type { Policy } from "./policies/policy.ts";
export { PolicyProfile } from "./policies/profile.ts";
export type { PolicyProfileInput } from "./policies/profile.ts";
export { POLICY_NAMES, POLICY_PROFILES, isPolicyName } from "./policies/registry.ts";
export type { PolicyName } from "./policies/registry.ts";
// Money: what a lease pays and how long it lasts, what a job is charged, who pays for lateness, what a dedicated machine has earned
export {
  SettlementTerms,
  DEFAULT_TERMS,
  LEASES_PER_SLOT,
  leaseRoom,
  leaseRoomLeft,
  pieceRate,
  leaseTerm,
  vouchedSeconds,
  workSample,
  measuredWork,
  workAtLease,
  pilotPay,
  measuredSpeed,
  confirmedFailure,
  failurePieces,
  programFailure,
  WORKER_TROUBLE_CODES,
  estimateContradicted,
  escrowFor,
  settleJob,
  settleUnfinishedJob,
  benefitWithoutDowntime,
  ChargeReason,
  contractAccrual,
} from "./settlement.ts";
export type { SettlementTermsInput, LeaseTermInput, WorkSample, HeldPiece, FailedRun, DowntimeInput, SettleInput, Settlement, UnfinishedInput, ContractAccrualInput } from "./settlement.ts";
// Dedicated contracts: pay for proven presence only
export { freshProof, contractProved, contractMissed, probeDelay, PROBE_MEAN_TIMEOUTS, PROBE_MIN_TIMEOUTS, PROBE_MAX_TIMEOUTS } from "./contract-proof.ts";
export type { ContractProof } from "./contract-proof.ts";
// What a contradicted work estimate is charged: the admitted plan priced at the measured work
export { chargeForWork, priceAtRatio, toleranceGain, WORK_RATIOS } from "./pricing.ts";
export type { WorkChargeInput, WorkCharge } from "./pricing.ts";
// Jobs without a work estimate: pilots first, the rest planned from their measured work
export { PILOT_TASKS, REFERENCE_SPEED, pilotCount, provisionalWork, pilotWork, loweredBenefit, pilotJob, decidePilots, decideRemainder } from "./pilots.ts";
export type { PilotRun, RemainderInput, Answer } from "./pilots.ts";
// Asking again what the engine did not take: one backoff for delayed jobs and pilot jobs' rests
export { askedAgainDue, askedNow } from "./policies/outcomes.ts";
export type { Asked } from "./policies/outcomes.ts";
// A job larger than one Market Manager's machines, split by task ranges across managers
export { splitByRoom, partBenefit, checkSplit, MAX_SPLIT_PARTS } from "./job-split.ts";
export type { Room, SplitPart } from "./job-split.ts";
// Randomness is always passed in
export { createRng } from "./rng.ts";
export type { Rng } from "./rng.ts";
export { GoldenScenario, replayGolden, countBy } from "./golden.ts";
export { MarketReason, ServiceReason, JobFileReason, ModuleReason, SandboxFailure, RunFailure, LimitName, PathProblem, MARKET_REASON_CODES, isMarketReasonCode } from "./vocabulary.ts";
export type { MarketReasonCode, MarketReasonOf } from "./vocabulary.ts";
export { quorumOf, maxCopies, verifyCopies, copyConflict, copyPieces, contestPieces, addedCopyPiece, CONTEST_MARGIN } from "./quorum.ts";
export type { CopyVote, VerifyInput, Verdict, CopyHolder, JudgedCopy, EarlierCopies } from "./quorum.ts";
// Standing: what a producer account earned by verified results, and what it decides
export { StandingFacts, StandingRules, DEFAULT_STANDING_RULES, standingOf, spotCheckFraction, spotChecked, drawnMachine, verifierOf, COMMON_MAIL_DOMAINS } from "./policies/standing.ts";
export type { Standing, StandingStep, StandingRulesInput } from "./policies/standing.ts";
export { IDLE_TAKE_SLACK, idleTake, idleTakeOrder, spareFrom, spareTasks } from "./policies/idle-take.ts";
export type { Holder, TakeInput } from "./policies/idle-take.ts";
// What a reported run does to its task and job: decided, run again, given up (the attempt and failure limits)
export { taskOutcome } from "./task-outcome.ts";
export type { TaskOutcomeInput, TaskOutcome } from "./task-outcome.ts";
// Which runs measure a job's work and a machine's speed; what a contradicted estimate is charged
export { workSampleOf, speedAfterRun, contradictedWork, measuredWorkCharge, leaseBudget, SPEED_CHANGE_NOISE } from "./measured-work.ts";
export type { RunOf, JobOf, SpeedRunInput } from "./measured-work.ts";
// The escrow of a pilot job's rest
export { remainderEscrow, remainderMaxSpend } from "./remainder-escrow.ts";
export type { RemainderEscrowInput } from "./remainder-escrow.ts";
// The machine offers the market believes (also the package's "./offer-limits" entry, for the worker's wire schema)
export { OFFER_LIMITS, offerFault } from "./offer-limits.ts";
export type { OfferFault } from "./offer-limits.ts";

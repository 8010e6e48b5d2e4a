import { z } from "zod";
import { ChargeReason, MarketReason, RunFailure } from "@cyclemarket/costbenefit";

// Reasons the market stored as JSON (a job's decision, its failure, its settlement's terms, the
// decision log) are checked against the vocabulary on their way out: the API answers with reasons
// of the vocabulary's types, and a reason with a field no schema declares fails here, in the
// tests, rather than reaching a page as a sentence with a gap in it.

export const Reasons = z.array(MarketReason);

/**
 * A job's decision as stored (jobs.ts decisionRecord, or `delayed` with no reasons while its tasks
 * are taken in): the outcome and reasons are checked; the money beside them is as it was written.
 */
export const StoredDecision = z.looseObject({ outcome: z.enum(["admitted", "delayed", "rejected"]), reasons: Reasons });
export type StoredDecision = z.infer<typeof StoredDecision>;

export function storedDecision(value: unknown): StoredDecision | null {
  return value == null ? null : StoredDecision.parse(value);
}

/** Why a failed job failed: the reason its result stores under `error` (results.ts, remainder.ts). */
export function jobFailure(result: unknown): MarketReason | null {
  const error = typeof result === "object" && result !== null ? (result as { error?: unknown }).error : undefined;
  return error === undefined ? null : MarketReason.parse(error);
}

/** The charge reasons of a job's settlement (ledger/settlement.ts writes the engine's). */
export const chargeReasons = (terms: unknown[] | undefined): ChargeReason[] => z.array(ChargeReason).parse(terms ?? []);

/** The failure codes of a task's failed runs (a sandbox failure or `exit:N`, as results.ts records them). */
export const runFailures = (codes: unknown): RunFailure[] => z.array(RunFailure).parse(codes);

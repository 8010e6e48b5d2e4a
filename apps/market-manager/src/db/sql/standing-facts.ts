import { statement } from "./statement.ts";

/** Counts to add to producer accounts' standing facts, one row per account. */
export interface StandingFactsParams {
  users: string[];
  verified: number[];
  disagreements: number[];
  unconfirmedFailures: number[];
  expiredLeases: number[];
  forgeries: number[];
  now: number;
}

export interface StandingFactsRow {
  userId: string;
  verified: number;
  disagreements: number;
  unconfirmedFailures: number;
  expiredLeases: number;
  forgeries: number;
}

/**
 * Adds what the market observed to accounts' standing facts (the engine computes standing from
 * them: costbenefit policies/standing.ts) and returns each account's counts after the addition,
 * for memory to take once the transaction commits.
 */
export const addStandingFacts = statement<StandingFactsParams, StandingFactsRow>(
  "add-standing-facts",
  (p) => `
INSERT INTO "Standing" AS s ("userId", verified, disagreements, "unconfirmedFailures", "expiredLeases", forgeries, "updatedAt")
SELECT x.u, x.v, x.d, x.f, x.e, x.g, timestamp 'epoch' + ${p.now}::float8 * interval '1 millisecond'
FROM unnest(${p.users}::text[], ${p.verified}::int[], ${p.disagreements}::int[], ${p.unconfirmedFailures}::int[], ${p.expiredLeases}::int[], ${p.forgeries}::int[]) AS x(u, v, d, f, e, g)
ON CONFLICT ("userId") DO UPDATE SET
  verified = s.verified + EXCLUDED.verified,
  disagreements = s.disagreements + EXCLUDED.disagreements,
  "unconfirmedFailures" = s."unconfirmedFailures" + EXCLUDED."unconfirmedFailures",
  "expiredLeases" = s."expiredLeases" + EXCLUDED."expiredLeases",
  forgeries = s.forgeries + EXCLUDED.forgeries,
  "updatedAt" = EXCLUDED."updatedAt"
RETURNING "userId", verified, disagreements, "unconfirmedFailures", "expiredLeases", forgeries`,
);

/**
 * The facts of accounts caught forging whose row changed after `since` (ms since the epoch), by
 * whichever manager: each manager reads them once a stamp (market/adopt.ts), so an account
 * caught at one has no standing at any (the partial index Standing_forgers_idx finds them).
 */
export const recentForgers = statement<{ since: number }, StandingFactsRow>(
  "recent-forgers",
  (p) => `
SELECT "userId", verified, disagreements, "unconfirmedFailures", "expiredLeases", forgeries FROM "Standing"
WHERE forgeries > 0 AND "updatedAt" > timestamp 'epoch' + ${p.since}::float8 * interval '1 millisecond'`,
);

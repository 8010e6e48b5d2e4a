import { statement } from "./statement.ts";

export interface ContractFactsParams {
  userId: string;
  /** The newest payments to the account looked at, at most: the count is bounded whatever the account earned. */
  scan: number;
}

export interface ContractFactsRow {
  confirmed: boolean;
  createdMs: number;
  verifiedResults: number;
}

/**
 * What the market verified of a producer account, for its contract ceiling (costbenefit
 * contractCeiling): whether its address is confirmed, when it was made, and how many of its paid
 * results agreed with a machine of another owner (the task's agreedOwners). Payments are read
 * through the account's postings, newest first, by their index (accountId, createdAt), at most
 * `scan` of them: results have no index by machine or owner, and need none for this.
 */
export const contractFacts = statement<ContractFactsParams, ContractFactsRow>(
  "contract-facts",
  (p) => `
SELECT u."emailVerified" AS confirmed,
  (extract(epoch FROM u."createdAt") * 1000)::float8 AS "createdMs",
  (SELECT count(*)::int FROM (
     SELECT e."taskId" FROM "LedgerAccount" a
     JOIN "LedgerPosting" lp ON lp."accountId" = a.id
     JOIN "LedgerEntry" e ON e.id = lp."entryId"
     WHERE a.kind = 'producer' AND a."userId" = u.id AND e.kind = 'payment' AND lp."amountMicro" > 0
     ORDER BY lp."createdAt" DESC
     LIMIT ${p.scan}
   ) paid JOIN "Task" t ON t.id = paid."taskId"
   WHERE t."agreedOwners" >= 2) AS "verifiedResults"
FROM "user" u
WHERE u.id = ${p.userId}`,
);

import { statement } from "./statement.ts";

/**
 * What admins granted consumers and what producers moved from their earnings to their consumer
 * balances, as text: the credit posting of each such entry, found by the entries' partial index
 * (migration 20261128170000_credit_moves_index). For the admin's books and the history's samples.
 */
const CREDIT_MOVES = `
  (SELECT coalesce(sum(p."amountMicro"), 0) FROM "LedgerEntry" e JOIN "LedgerPosting" p ON p."entryId" = e.id
     WHERE e.kind = 'admin-grant' AND p."amountMicro" > 0)::text AS "adminGranted",
  (SELECT coalesce(sum(p."amountMicro"), 0) FROM "LedgerEntry" e JOIN "LedgerPosting" p ON p."entryId" = e.id
     WHERE e.kind = 'earnings-transfer' AND p."amountMicro" > 0)::text AS "movedFromEarnings"`;

/** Micro-credits as decimal text. */
interface CreditMovesRow {
  adminGranted: string;
  movedFromEarnings: string;
}

export interface BooksRow extends CreditMovesRow {
  market: string;
  producers: string;
  escrow: string;
  total: string;
  granted: string;
}

/**
 * The admin's books in one statement, on the pages' readers, every part found by an index and
 * bounded by the market's users and running jobs, not its history: the users' and the market's
 * accounts (by kind), the escrow of the admitted and running jobs (only those hold any: every
 * settlement empties its job's escrow), and the starting credits, each consumer's one entry under
 * `grant:<user>`. Summed over every account (one escrow account per job ever admitted) the
 * overview the dashboard is pushed as the market changes grew with the market's history (bench:history).
 * Admins' grants and moves of earnings are read by their own index (CREDIT_MOVES).
 */
export const marketBooks = statement<Record<string, never>, BooksRow>(
  "market-books",
  () => `
WITH users AS (
  SELECT id, kind, "userId", "balanceMicro" FROM "LedgerAccount"
  WHERE kind IN ('consumer'::"AccountKind", 'producer'::"AccountKind", 'market'::"AccountKind")
), escrow AS (
  SELECT coalesce(sum(x."balanceMicro"), 0) AS micro FROM "Job" j JOIN "LedgerAccount" x ON x."jobId" = j.id
  WHERE j.status IN ('admitted'::"JobStatus", 'running'::"JobStatus")
)
SELECT (SELECT coalesce(sum("balanceMicro"), 0)::text FROM users WHERE kind = 'market'::"AccountKind") AS market,
  (SELECT coalesce(sum("balanceMicro"), 0)::text FROM users WHERE kind = 'producer'::"AccountKind") AS producers,
  (SELECT micro::text FROM escrow) AS escrow,
  (SELECT (coalesce(sum("balanceMicro"), 0) + (SELECT micro FROM escrow))::text FROM users) AS total,
  (SELECT coalesce(sum(p."amountMicro"), 0)::text FROM users a
     JOIN "LedgerEntry" e ON e."uniqueKey" = 'grant:' || a."userId" AND e.kind = 'grant'
     JOIN "LedgerPosting" p ON p."entryId" = e.id AND p."accountId" = a.id
   WHERE a.kind = 'consumer'::"AccountKind") AS granted,
  ${CREDIT_MOVES}`,
);

export interface TotalsRow extends CreditMovesRow {
  paid: string;
  market: string;
  granted: string;
  /** The charges of the jobs settled after `after`, and of those the ones settled by `through`. */
  since: string;
  kept: string;
}

/**
 * The ledger's running totals for the history's samples (ops/sampler.ts), read without walking the
 * ledger, in one statement (one snapshot): a walk of the postings cost in proportion to the
 * market's whole history. Producers' accounts receive only payments and contracts and give only
 * what their owners move to their consumer balances, so their balances and those moves are what
 * producers were paid (as marketBooks counts it); a consumer's starting credits are the one entry
 * under `grant:<user>`, found by that key from the consumer accounts, and admins' grants and the
 * moves are read by their own index (CREDIT_MOVES).
 *
 * What consumers were charged: the charges of the jobs settled after `after` (ms since the epoch),
 * and of those settled by `through` as well, read by the completedAt index. A job's charge is
 * written once, with the time it was settled (completedAt), by the statement that settles it.
 */
export const marketTotals = statement<{ after: number; through: number }, TotalsRow>(
  "market-totals",
  (p) => `SELECT
  (SELECT coalesce(sum("balanceMicro"), 0) FROM "LedgerAccount" WHERE kind = 'producer'::"AccountKind")::text AS paid,
  (SELECT coalesce(max("balanceMicro"), 0) FROM "LedgerAccount" WHERE kind = 'market'::"AccountKind")::text AS market,
  (SELECT coalesce(sum(p."amountMicro"), 0) FROM "LedgerAccount" a
     JOIN "LedgerEntry" e ON e."uniqueKey" = 'grant:' || a."userId"
     JOIN "LedgerPosting" p ON p."entryId" = e.id AND p."accountId" = a.id
   WHERE a.kind = 'consumer'::"AccountKind")::text AS granted,
  ${CREDIT_MOVES},
  c.since, c.kept
  FROM (SELECT coalesce(sum("chargedMicro"), 0)::text AS since,
      coalesce(sum("chargedMicro") FILTER (WHERE "completedAt" <= timestamp 'epoch' + ${p.through}::float8 * interval '1 millisecond'), 0)::text AS kept
    FROM "Job" WHERE "completedAt" > timestamp 'epoch' + ${p.after}::float8 * interval '1 millisecond') c`,
);

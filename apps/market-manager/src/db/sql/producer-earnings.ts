import { statement, type Placeholders } from "./statement.ts";

interface EarnedParams {
  producerId: string;
  /** From when on (ms since the epoch). */
  since: number;
}

/**
 * What a producer earned from `since` on. Every credit to a producer's account is a run's payment
 * or a contract's (ledger/settlement.ts), so its postings above zero are its earnings, read by the
 * account's index (accountId, createdAt) alone: with their entries joined to check their kind, a
 * busy producer's month of earnings took several times as long to sum.
 */
const earned = (p: Placeholders<EarnedParams>) => `account AS (
  SELECT id FROM "LedgerAccount" WHERE kind = 'producer'::"AccountKind" AND "userId" = ${p.producerId}
), earned AS (
  SELECT p."createdAt" AS at, p."amountMicro" AS micro FROM account a JOIN "LedgerPosting" p ON p."accountId" = a.id
  WHERE p."createdAt" >= timestamp 'epoch' + ${p.since}::float8 * interval '1 millisecond' AND p."amountMicro" > 0
)`;

/** What it earned in each hour with earnings: [hour's start (ms), micro-credits]. */
const HOURLY = `(SELECT coalesce(json_agg(json_build_array(h, micro) ORDER BY h), '[]'::json) FROM (
    SELECT (extract(epoch FROM date_trunc('hour', at)) * 1000)::float8 AS h, sum(micro)::text AS micro FROM earned GROUP BY 1) x) AS hourly`;

export interface HourlyRow {
  /** [hour's start (ms), micro-credits as decimal text] for each hour with earnings. */
  hourly: [number, string][];
}

export interface EarningsRow extends HourlyRow {
  balance: string;
  lastHour: string;
  lastDay: string;
  /** Each settled job's charge, this producer's payments for it, and all producers' payments for it. */
  jobs: [string, string, string][];
}

export interface EarningsParams extends EarnedParams {
  /** The last hour's start (ms); `since` is the day's. */
  hourAgo: number;
  /** How many of the producer's newest postings name the jobs its share is read from. */
  sharePostings: number;
  /** Settled jobs its share is read from, at most. */
  shareJobs: number;
}

/**
 * A producer's earnings page in one statement, on the pages' readers: its balance, what it earned
 * in the last hour and day, per hour, and for the latest settled jobs it was paid for (found among
 * its newest postings by its account's index), each job's charge, what it was paid and what all
 * producers were paid. Postings carry their entry's time, so the day's are read by the account's
 * index (accountId, createdAt) and summed by PostgreSQL: read row by row into the manager, a
 * producer paid a few times a second held hundreds of thousands of rows for each view of its page,
 * and its share walked every payment it was ever paid (bench:history).
 */
export const producerEarnings = statement<EarningsParams, EarningsRow>(
  "producer-earnings",
  (p) => `
WITH ${earned(p)}, newest AS (
  SELECT DISTINCT e."jobId" AS job
  FROM (SELECT p."entryId" FROM account a JOIN "LedgerPosting" p ON p."accountId" = a.id ORDER BY p."createdAt" DESC LIMIT ${p.sharePostings}) p
  JOIN "LedgerEntry" e ON e.id = p."entryId"
  WHERE e.kind = 'payment' AND e."jobId" IS NOT NULL
), settled AS (
  SELECT j.id, j."chargedMicro" FROM newest n JOIN "Job" j ON j.id = n.job
  WHERE j."chargedMicro" IS NOT NULL ORDER BY j."completedAt" DESC NULLS LAST LIMIT ${p.shareJobs}
)
SELECT (SELECT coalesce(sum(l."balanceMicro"), 0)::text FROM account a JOIN "LedgerAccount" l ON l.id = a.id) AS balance,
  (SELECT coalesce(sum(micro), 0)::text FROM earned WHERE at >= timestamp 'epoch' + ${p.hourAgo}::float8 * interval '1 millisecond') AS "lastHour",
  (SELECT coalesce(sum(micro), 0)::text FROM earned) AS "lastDay",
  ${HOURLY},
  (SELECT coalesce(json_agg(json_build_array(s."chargedMicro"::text, paid.own, paid.micro)), '[]'::json)
     FROM settled s CROSS JOIN account mine,
     -- The job's payments read once, by its entries: this producer's and every producer's.
     LATERAL (SELECT coalesce(sum(p."amountMicro") FILTER (WHERE p."accountId" = mine.id), 0)::text AS own,
         coalesce(sum(p."amountMicro") FILTER (WHERE a.kind = 'producer'::"AccountKind"), 0)::text AS micro
       FROM "LedgerEntry" e JOIN "LedgerPosting" p ON p."entryId" = e.id JOIN "LedgerAccount" a ON a.id = p."accountId"
       WHERE e."jobId" = s.id AND e.kind = 'payment') paid) AS jobs`,
);

/** A producer's payment and contract earnings per hour from `since` on (the earnings series). */
export const producerEarnedHourly = statement<EarnedParams, HourlyRow>("producer-earned-hourly", (p) => `WITH ${earned(p)} SELECT ${HOURLY}`);

/**
 * What each of these producers earned since `since` (ms since the epoch): their producer accounts'
 * credits, read by the index (accountId, createdAt), one range per owner (the going rate).
 */
export const producersEarnedSince = statement<{ producerIds: string[]; since: number }, { owner: string; micro: string }>(
  "going-rate-earned",
  (p) => `
SELECT a."userId" AS owner, coalesce(sum(p."amountMicro") FILTER (WHERE p."amountMicro" > 0), 0)::text AS micro
FROM "LedgerAccount" a LEFT JOIN "LedgerPosting" p ON p."accountId" = a.id AND p."createdAt" >= timestamp 'epoch' + ${p.since}::float8 * interval '1 millisecond'
WHERE a.kind = 'producer'::"AccountKind" AND a."userId" = ANY(${p.producerIds}::text[])
GROUP BY a."userId"`,
);

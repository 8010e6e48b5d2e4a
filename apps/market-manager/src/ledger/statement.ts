import type { Prepared } from "../db/client.ts";
import type { JsonValue } from "../db/generated/internal/prismaNamespace.ts";
import { toCredits } from "./ledger.ts";

/** Lines of a user's statement: the newest movements on their accounts. */
const STATEMENT_LINES = 200;

/** The user's consumer and producer accounts. */
const ACCOUNTS = `accounts AS (
  SELECT id, kind::text AS kind, "balanceMicro" FROM "LedgerAccount"
  WHERE "userId" = $1 AND kind IN ('consumer'::"AccountKind", 'producer'::"AccountKind")
)`;
const BALANCES = `
  (SELECT coalesce(json_object_agg(kind, "balanceMicro"::text), '{}'::json) FROM accounts) AS balances,
  -- Only admitted and running jobs hold escrow; every other job's escrow account is empty.
  (SELECT coalesce(sum(x."balanceMicro"), 0)::text FROM "Job" j JOIN "LedgerAccount" x ON x."jobId" = j.id
     WHERE j."ownerId" = $1 AND j.status IN ('admitted'::"JobStatus", 'running'::"JobStatus")) AS escrow`;

/**
 * A user's statement in one statement, on the pages' readers (Database.reads) and prepared once per
 * connection: their accounts' balances, what their running jobs hold in escrow, and the newest
 * lines. Each account's newest postings are read by its own index (accountId, createdAt) and the newest of
 * both kept: ordered by their entries' time, the read sorted every posting the user ever had (a
 * producer holds one per paid run). A line names its job for the job's owner, who may open it
 * (`ownJob`), and for a producer paid for its tasks only when the owner let producers see the
 * name (`nameToProducers`); everyone sees the job's id.
 */
const STATEMENT_SQL = `
WITH ${ACCOUNTS}, lines AS (
  SELECT p.id, p."createdAt", p."amountMicro", p."entryId", a.kind AS account
  FROM accounts a CROSS JOIN LATERAL (
    SELECT * FROM "LedgerPosting" p WHERE p."accountId" = a.id ORDER BY p."createdAt" DESC, p.id DESC LIMIT $2
  ) p
  ORDER BY p."createdAt" DESC, p.id DESC LIMIT $2
)
SELECT ${BALANCES},
  (SELECT coalesce(json_agg(json_build_object('at', (extract(epoch FROM e."createdAt") * 1000)::float8, 'account', l.account, 'kind', e.kind,
      'jobId', e."jobId", 'jobName', CASE WHEN j."ownerId" = $1 OR j."nameToProducers" THEN j.name END, 'ownJob', coalesce(j."ownerId" = $1, false),
      'amount', l."amountMicro"::text, 'memo', e.memo) ORDER BY l."createdAt" DESC, l.id DESC), '[]'::json)
     FROM lines l JOIN "LedgerEntry" e ON e.id = l."entryId" LEFT JOIN "Job" j ON j.id = e."jobId") AS lines`;

/** The balances alone: what every page's header polls (ledger.balance), every few seconds. */
const BALANCE_SQL = `WITH ${ACCOUNTS} SELECT ${BALANCES}`;

interface StatementRow {
  balances: Partial<Record<"consumer" | "producer", string>>;
  escrow: string;
  lines: { at: number; account: "consumer" | "producer"; kind: string; jobId: string | null; jobName: string | null; ownJob: boolean; amount: string; memo: JsonValue }[];
}

const balancesOf = ({ balances, escrow }: Pick<StatementRow, "balances" | "escrow">) => ({
  consumerBalance: toCredits(BigInt(balances.consumer ?? 0)),
  producerBalance: toCredits(BigInt(balances.producer ?? 0)),
  /** Held in escrow for the user's jobs now. */
  inEscrow: toCredits(BigInt(escrow)),
});

/** A user's balances and the movements on their consumer and producer accounts, newest first. */
export async function statement(reads: Prepared, userId: string) {
  const [row] = await reads.rows<StatementRow>("ledger-statement", STATEMENT_SQL, [userId, STATEMENT_LINES]);
  return { ...balancesOf(row!), lines: row!.lines.map((l) => ({ ...l, amount: toCredits(BigInt(l.amount)) })) };
}

/** A user's balances and what their running jobs hold, without the lines (the pages' headers). */
export async function balances(reads: Prepared, userId: string) {
  const [row] = await reads.rows<Pick<StatementRow, "balances" | "escrow">>("ledger-balance", BALANCE_SQL, [userId]);
  return balancesOf(row!);
}

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/**
 * How many of a producer's newest postings name the jobs its earnings' share is read from: the
 * settled jobs among them, the latest SHARE_JOBS of those by completion.
 */
const SHARE_POSTINGS = 2_000;
/**
 * Settled jobs a producer's share of what its work sold for is read from: each costs a read of
 * every payment of the job (a thousand-task job, a thousand entries).
 */
const SHARE_JOBS = 20;

/**
 * What a producer earned from $2 on (ms since the epoch); $1 the producer. Every credit to a
 * producer's account is a run's payment or a contract's (ledger/settlement.ts), so its postings
 * above zero are its earnings, read by the account's index (accountId, createdAt) alone: with
 * their entries joined to check their kind, a month of a busy producer's earnings took several
 * times as long to sum.
 */
const EARNED = `account AS (
  SELECT id FROM "LedgerAccount" WHERE kind = 'producer'::"AccountKind" AND "userId" = $1
), earned AS (
  SELECT p."createdAt" AS at, p."amountMicro" AS micro FROM account a JOIN "LedgerPosting" p ON p."accountId" = a.id
  WHERE p."createdAt" >= timestamp 'epoch' + $2::float8 * interval '1 millisecond' AND p."amountMicro" > 0
)`;

/** What it earned in each hour with earnings: [hour's start (ms), micro-credits]. */
const HOURLY = `(SELECT coalesce(json_agg(json_build_array(h, micro) ORDER BY h), '[]'::json) FROM (
    SELECT (extract(epoch FROM date_trunc('hour', at)) * 1000)::float8 AS h, sum(micro)::text AS micro FROM earned GROUP BY 1) x) AS hourly`;

/**
 * A producer's earnings page in one statement, on the pages' readers: its balance, what it earned in the last
 * hour ($3 on) and day ($2 on), per hour, and for the latest settled jobs it was paid for (found
 * among its newest postings by its account's index), each job's charge, what it was paid and what
 * all producers were paid. Postings carry their entry's time, so the day's are read by the
 * account's index (accountId, createdAt) and summed by PostgreSQL: read row by row into the
 * manager, a producer paid a few times a second (a trivial task's run, a few machines) held
 * hundreds of thousands of rows for each view of its page, and its share walked every payment it
 * was ever paid (bench:history shows the cost as payments accumulate).
 */
const EARNINGS_SQL = `
WITH ${EARNED}, newest AS (
  SELECT DISTINCT e."jobId" AS job
  FROM (SELECT p."entryId" FROM account a JOIN "LedgerPosting" p ON p."accountId" = a.id ORDER BY p."createdAt" DESC LIMIT $4) p
  JOIN "LedgerEntry" e ON e.id = p."entryId"
  WHERE e.kind = 'payment' AND e."jobId" IS NOT NULL
), settled AS (
  SELECT j.id, j."chargedMicro" FROM newest n JOIN "Job" j ON j.id = n.job
  WHERE j."chargedMicro" IS NOT NULL ORDER BY j."completedAt" DESC NULLS LAST LIMIT $5
)
SELECT (SELECT coalesce(sum(l."balanceMicro"), 0)::text FROM account a JOIN "LedgerAccount" l ON l.id = a.id) AS balance,
  (SELECT coalesce(sum(micro), 0)::text FROM earned WHERE at >= timestamp 'epoch' + $3::float8 * interval '1 millisecond') AS "lastHour",
  (SELECT coalesce(sum(micro), 0)::text FROM earned) AS "lastDay",
  ${HOURLY},
  (SELECT coalesce(json_agg(json_build_array(s."chargedMicro"::text, paid.own, paid.micro)), '[]'::json)
     FROM settled s CROSS JOIN account mine,
     -- The job's payments read once, by its entries: this producer's and every producer's.
     LATERAL (SELECT coalesce(sum(p."amountMicro") FILTER (WHERE p."accountId" = mine.id), 0)::text AS own,
         coalesce(sum(p."amountMicro") FILTER (WHERE a.kind = 'producer'::"AccountKind"), 0)::text AS micro
       FROM "LedgerEntry" e JOIN "LedgerPosting" p ON p."entryId" = e.id JOIN "LedgerAccount" a ON a.id = p."accountId"
       WHERE e."jobId" = s.id AND e.kind = 'payment') paid) AS jobs`;

interface EarningsRow {
  balance: string;
  lastHour: string;
  lastDay: string;
  hourly: [number, string][];
  /** Each settled job's charge, this producer's payments for it, and all producers' payments for it. */
  jobs: [string, string, string][];
}

/**
 * What a producer earned over time (per hour for the last day), and what consumers were charged
 * for the jobs it worked on (its latest settled ones, EARNINGS_SQL), in proportion to its share of
 * those jobs' producer payments: so a producer can see how much of what its work sold for reached it.
 */
export async function producerEarnings(reads: Prepared, userId: string, now: number) {
  const [row] = await reads.rows<EarningsRow>("producer-earnings", EARNINGS_SQL, [userId, now - DAY, now - HOUR, SHARE_POSTINGS, SHARE_JOBS]);
  let charged = 0;
  let paid = 0;
  for (const [jobCharged, ownMicro, paidMicro] of row!.jobs) {
    const total = Number(paidMicro);
    const own = Number(ownMicro);
    if (total <= 0) continue;
    charged += (Number(jobCharged) * own) / total / 1e6;
    paid += own / 1e6;
  }
  return {
    /** The producer account's balance, read in the same snapshot as the rest (the Produce page shows them side by side). */
    producerBalance: toCredits(BigInt(row!.balance)),
    earnedLastHour: toCredits(BigInt(row!.lastHour)),
    earnedLastDay: toCredits(BigInt(row!.lastDay)),
    hourly: row!.hourly.map(([hour, micro]) => ({ hour, earned: toCredits(BigInt(micro)) })),
    chargedForTheirWork: charged,
    paidForThatWork: paid,
  };
}

/** A producer's payment and contract earnings per hour from $2 on (earningsSeries). */
const EARNED_HOURLY_SQL = `WITH ${EARNED} SELECT ${HOURLY}`;

/** What `userId` earned from `since` on, per hour: hours without earnings left out. */
export async function earnedHourly(reads: Prepared, userId: string, since: number): Promise<{ at: number; micro: bigint }[]> {
  const [row] = await reads.rows<Pick<EarningsRow, "hourly">>("producer-earned-hourly", EARNED_HOURLY_SQL, [userId, since]);
  return row!.hourly.map(([at, micro]) => ({ at, micro: BigInt(micro) }));
}

/**
 * What admins granted consumers and what producers moved from their earnings to their consumer
 * balances, as text: the credit posting of each such entry, found by the entries' partial index
 * (migration 20261128170000_credit_moves_index). For the admin's books and the history's samples.
 */
export const CREDIT_MOVES_SQL = `
  (SELECT coalesce(sum(p."amountMicro"), 0) FROM "LedgerEntry" e JOIN "LedgerPosting" p ON p."entryId" = e.id
     WHERE e.kind = 'admin-grant' AND p."amountMicro" > 0)::text AS "adminGranted",
  (SELECT coalesce(sum(p."amountMicro"), 0) FROM "LedgerEntry" e JOIN "LedgerPosting" p ON p."entryId" = e.id
     WHERE e.kind = 'earnings-transfer' AND p."amountMicro" > 0)::text AS "movedFromEarnings"`;

/**
 * The admin's books in one statement, on the pages' readers, every part found by an index and
 * bounded by the market's users and running jobs, not its history: the users' and the market's
 * accounts (by kind), the escrow of the admitted and running jobs (only those hold any: every
 * settlement empties its job's escrow), and the starting credits, each consumer's one entry under
 * `grant:<user>`. Summed over every account (one escrow account per job ever admitted) the
 * overview the dashboard is pushed as the market changes grew with the finished jobs
 * (bench:history). Admins' grants and moves of earnings are
 * read by their own index (CREDIT_MOVES_SQL).
 */
const BOOKS_SQL = `
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
  ${CREDIT_MOVES_SQL}`;

interface BooksRow {
  market: string;
  producers: string;
  escrow: string;
  total: string;
  granted: string;
  adminGranted: string;
  movedFromEarnings: string;
}

/** The market's own account (its profit), what escrows and producers hold, and the check that the books balance (BOOKS_SQL). */
export async function marketBooks(reads: Prepared) {
  const [row] = await reads.rows<BooksRow>("market-books", BOOKS_SQL, []);
  const marketBalance = BigInt(row!.market);
  // Starting credits and admins' grants are the market's gifts, not a cost of trading: profit leaves them out.
  const startingCredits = BigInt(row!.granted);
  const adminGranted = BigInt(row!.adminGranted);
  const granted = startingCredits + adminGranted;
  const producers = BigInt(row!.producers);
  return {
    /** Benefits charged minus producer payments and contracts. */
    profit: toCredits(marketBalance + granted),
    /** Every credit the market gave: starting credits and admins' grants. */
    granted: toCredits(granted),
    startingCredits: toCredits(startingCredits),
    adminGranted: toCredits(adminGranted),
    marketBalance: toCredits(marketBalance),
    inEscrow: toCredits(BigInt(row!.escrow)),
    /** What producers' accounts hold now. */
    producerBalances: toCredits(producers),
    /** What producers were paid: what they hold and what they moved to their consumer balances. */
    paidToProducers: toCredits(producers + BigInt(row!.movedFromEarnings)),
    /** The users', the market's and the running jobs' accounts sum to zero: credits left in an ended job's escrow would make them not. */
    balanced: BigInt(row!.total) === 0n,
  };
}

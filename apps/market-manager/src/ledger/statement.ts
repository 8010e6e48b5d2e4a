import type { Db } from "../db/client.ts";
import { preparedRows, readerOf } from "../db/client.ts";
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
 * A user's statement in one statement, on the pages' readers (readerOf) and prepared once per
 * connection: their accounts' balances, what their running jobs hold in escrow, and the newest
 * lines. Each account's newest postings are read by its own index (accountId, createdAt) and the newest of
 * both kept: ordered by their entries' time, the read sorted every posting the user ever had (a
 * producer holds one per paid run). A line names its job only for the job's owner: a producer
 * paid for someone's task sees its id.
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
      'jobId', e."jobId", 'jobName', j.name, 'amount', l."amountMicro"::text, 'memo', e.memo) ORDER BY l."createdAt" DESC, l.id DESC), '[]'::json)
     FROM lines l JOIN "LedgerEntry" e ON e.id = l."entryId" LEFT JOIN "Job" j ON j.id = e."jobId" AND j."ownerId" = $1) AS lines`;

/** The balances alone: what every page's header polls (ledger.balance), every few seconds. */
const BALANCE_SQL = `WITH ${ACCOUNTS} SELECT ${BALANCES}`;

interface StatementRow {
  balances: Partial<Record<"consumer" | "producer", string>>;
  escrow: string;
  lines: { at: number; account: "consumer" | "producer"; kind: string; jobId: string | null; jobName: string | null; amount: string; memo: JsonValue }[];
}

const balancesOf = ({ balances, escrow }: Pick<StatementRow, "balances" | "escrow">) => ({
  consumerBalance: toCredits(BigInt(balances.consumer ?? 0)),
  producerBalance: toCredits(BigInt(balances.producer ?? 0)),
  /** Held in escrow for the user's jobs now. */
  inEscrow: toCredits(BigInt(escrow)),
});

/** A user's balances and the movements on their consumer and producer accounts, newest first. */
export async function statement(db: Db, userId: string) {
  const [row] = await preparedRows<StatementRow>(db, readerOf(db), "ledger-statement", STATEMENT_SQL, [userId, STATEMENT_LINES]);
  return { ...balancesOf(row!), lines: row!.lines.map((l) => ({ ...l, amount: toCredits(BigInt(l.amount)) })) };
}

/** A user's balances and what their running jobs hold, without the lines (the pages' headers). */
export async function balances(db: Db, userId: string) {
  const [row] = await preparedRows<Pick<StatementRow, "balances" | "escrow">>(db, readerOf(db), "ledger-balance", BALANCE_SQL, [userId]);
  return balancesOf(row!);
}

const HOUR = 3_600_000;

/**
 * What a producer earned over time (per hour for the last day), and what consumers were charged
 * for the jobs it worked on (its last 200 settled ones), in proportion to its share of those jobs'
 * producer payments: so a producer can see how much of what its work sold for reached it.
 */
export async function producerEarnings(db: Db, userId: string, now: number) {
  const account = await db.ledgerAccount.findUnique({ where: { kind_userId: { kind: "producer", userId } } });
  if (!account) return { earnedLastHour: 0, earnedLastDay: 0, hourly: [] as { hour: number; earned: number }[], chargedForTheirWork: 0, paidForThatWork: 0 };
  const since = new Date(now - 24 * HOUR);
  const recent = await db.ledgerPosting.findMany({
    where: { accountId: account.id, amountMicro: { gt: 0n }, entry: { createdAt: { gte: since }, kind: { in: ["payment", "contract"] } } },
    select: { amountMicro: true, entry: { select: { createdAt: true } } },
  });
  const hourly = new Map<number, bigint>();
  let lastHour = 0n;
  let lastDay = 0n;
  for (const p of recent) {
    const t = p.entry.createdAt.getTime();
    lastDay += p.amountMicro;
    if (t >= now - HOUR) lastHour += p.amountMicro;
    const h = Math.floor(t / HOUR) * HOUR;
    hourly.set(h, (hourly.get(h) ?? 0n) + p.amountMicro);
  }
  // The jobs it was paid for, settled: its share of their producer payments times their charge.
  const mine = await db.ledgerPosting.groupBy({ by: ["entryId"], where: { accountId: account.id, entry: { kind: "payment" } }, _sum: { amountMicro: true } });
  const entries = await db.ledgerEntry.findMany({ where: { id: { in: mine.map((m) => m.entryId) } }, select: { id: true, jobId: true } });
  const byJob = new Map<string, bigint>();
  const jobOf = new Map(entries.map((e) => [e.id, e.jobId]));
  for (const m of mine) {
    const jobId = jobOf.get(m.entryId);
    if (jobId) byJob.set(jobId, (byJob.get(jobId) ?? 0n) + (m._sum.amountMicro ?? 0n));
  }
  // The most recent settled jobs are enough to show the share; older ones would only cost queries.
  const jobs = await db.job.findMany({
    where: { id: { in: [...byJob.keys()] }, chargedMicro: { not: null } },
    select: { id: true, chargedMicro: true },
    orderBy: { completedAt: "desc" },
    take: 200,
  });
  let charged = 0;
  let paid = 0;
  for (const j of jobs) {
    const all = await db.ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { kind: "payment", jobId: j.id }, account: { kind: "producer" } } });
    const total = Number(all._sum.amountMicro ?? 0n);
    const own = Number(byJob.get(j.id) ?? 0n);
    if (total <= 0) continue;
    charged += (Number(j.chargedMicro) * own) / total / 1e6;
    paid += own / 1e6;
  }
  return {
    earnedLastHour: toCredits(lastHour),
    earnedLastDay: toCredits(lastDay),
    hourly: [...hourly].sort((a, b) => a[0] - b[0]).map(([h, v]) => ({ hour: h, earned: toCredits(v) })),
    chargedForTheirWork: charged,
    paidForThatWork: paid,
  };
}

/** The market's own account (its profit) and the check that all accounts sum to zero. */
export async function marketBooks(db: Db) {
  const market = await db.ledgerAccount.findFirst({ where: { kind: "market" } });
  const sum = await db.ledgerAccount.aggregate({ _sum: { balanceMicro: true } });
  const escrow = await db.ledgerAccount.aggregate({ _sum: { balanceMicro: true }, where: { kind: "escrow" } });
  const paid = await db.ledgerAccount.aggregate({ _sum: { balanceMicro: true }, where: { kind: "producer" } });
  // Starting credits are the market's gift, not a cost of trading: profit leaves them out.
  const granted = await db.ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { kind: "grant" }, account: { kind: "consumer" } } });
  const marketBalance = market?.balanceMicro ?? 0n;
  return {
    /** Benefits charged minus producer payments and contracts. */
    profit: toCredits(marketBalance + (granted._sum.amountMicro ?? 0n)),
    granted: toCredits(granted._sum.amountMicro ?? 0n),
    marketBalance: toCredits(marketBalance),
    inEscrow: toCredits(escrow._sum.balanceMicro ?? 0n),
    producerBalances: toCredits(paid._sum.balanceMicro ?? 0n),
    balanced: (sum._sum.balanceMicro ?? 0n) === 0n,
  };
}

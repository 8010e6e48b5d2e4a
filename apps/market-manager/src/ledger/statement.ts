import type { Prepared } from "../db/client.ts";
import { runStatement } from "../db/sql/statement.ts";
import { prepared } from "../db/sql/runners.ts";
import { userBalances, userStatement, type BalancesRow } from "../db/sql/user-statement.ts";
import { producerEarnedHourly, producerEarnings as earningsStatement } from "../db/sql/producer-earnings.ts";
import { marketBooks as booksStatement } from "../db/sql/market-books.ts";
import { toCredits } from "./ledger.ts";

/** Lines of a user's statement: the newest movements on their accounts. */
const STATEMENT_LINES = 200;

const balancesOf = ({ balances, escrow }: BalancesRow) => ({
  consumerBalance: toCredits(BigInt(balances.consumer ?? 0)),
  producerBalance: toCredits(BigInt(balances.producer ?? 0)),
  /** Held in escrow for the user's jobs now. */
  inEscrow: toCredits(BigInt(escrow)),
});

/** A user's balances and the movements on their consumer and producer accounts, newest first. */
export async function statement(reads: Prepared, userId: string) {
  const [row] = await runStatement(prepared(reads), userStatement, { userId, lines: STATEMENT_LINES });
  return { ...balancesOf(row!), lines: row!.lines.map((l) => ({ ...l, amount: toCredits(BigInt(l.amount)) })) };
}

/** A user's balances and what their running jobs hold, without the lines (the pages' headers). */
export async function balances(reads: Prepared, userId: string) {
  const [row] = await runStatement(prepared(reads), userBalances, { userId });
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
 * What a producer earned over time (per hour for the last day), and what consumers were charged
 * for the jobs it worked on (its latest settled ones, db/sql/producer-earnings.ts), in proportion to its share of
 * those jobs' producer payments: so a producer can see how much of what its work sold for reached it.
 */
export async function producerEarnings(reads: Prepared, userId: string, now: number) {
  const [row] = await runStatement(prepared(reads), earningsStatement, { producerId: userId, since: now - DAY, hourAgo: now - HOUR, sharePostings: SHARE_POSTINGS, shareJobs: SHARE_JOBS });
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

/** What `userId` earned from `since` on, per hour: hours without earnings left out. */
export async function earnedHourly(reads: Prepared, userId: string, since: number): Promise<{ at: number; micro: bigint }[]> {
  const [row] = await runStatement(prepared(reads), producerEarnedHourly, { producerId: userId, since });
  return row!.hourly.map(([at, micro]) => ({ at, micro: BigInt(micro) }));
}

/** The market's own account (its profit), what escrows and producers hold, and the check that the books balance (db/sql/market-books.ts). */
export async function marketBooks(reads: Prepared) {
  const [row] = await runStatement(prepared(reads), booksStatement, {});
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

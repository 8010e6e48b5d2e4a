import type { Db } from "../db/client.ts";
import { toCredits } from "./ledger.ts";

/** A user's balances and the movements on their consumer and producer accounts, newest first. */
export async function statement(db: Db, userId: string) {
  const accounts = await db.ledgerAccount.findMany({ where: { userId, kind: { in: ["consumer", "producer"] } } });
  const postings = await db.ledgerPosting.findMany({
    where: { accountId: { in: accounts.map((a) => a.id) } },
    orderBy: { entry: { createdAt: "desc" } },
    take: 200,
    include: { entry: true, account: { select: { kind: true } } },
  });
  const of = (kind: "consumer" | "producer") => toCredits(accounts.find((a) => a.kind === kind)?.balanceMicro ?? 0n);
  // A line names its job only for the job's owner: a producer paid for someone's task sees its id.
  const jobIds = [...new Set(postings.flatMap((p) => (p.entry.jobId ? [p.entry.jobId] : [])))];
  const owned = await db.job.findMany({ where: { id: { in: jobIds }, ownerId: userId }, select: { id: true, name: true } });
  const names = new Map(owned.map((j) => [j.id, j.name]));
  // Only admitted and running jobs hold escrow; every other job's escrow account is empty.
  const holding = await db.job.findMany({ where: { ownerId: userId, status: { in: ["admitted", "running"] } }, select: { id: true } });
  const escrow = holding.length
    ? await db.ledgerAccount.aggregate({ _sum: { balanceMicro: true }, where: { kind: "escrow", jobId: { in: holding.map((j) => j.id) } } })
    : null;
  return {
    consumerBalance: of("consumer"),
    producerBalance: of("producer"),
    /** Held in escrow for the user's jobs now. */
    inEscrow: toCredits(escrow?._sum.balanceMicro ?? 0n),
    lines: postings.map((p) => ({
      at: p.entry.createdAt.toISOString(),
      account: p.account.kind,
      kind: p.entry.kind,
      jobId: p.entry.jobId,
      jobName: (p.entry.jobId && names.get(p.entry.jobId)) ?? null,
      amount: toCredits(p.amountMicro),
      memo: p.entry.memo,
    })),
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

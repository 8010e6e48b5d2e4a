import { contractAccrual, freshProof } from "@cyclemarket/costbenefit";
import type { Market } from "../market/market.ts";
import type { LiveMachine } from "../market/live.ts";
import { post, spendable, toCredits, toMicro, type Tx } from "../ledger/ledger.ts";
import { contract } from "../ledger/entries.ts";
import { runStatement, type Runner } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { contractsPromised, lockContracts } from "../db/sql/machine-rows.ts";

// Dedicated contracts are paid as the capacity is proved (costbenefit `contractAccrual`; what
// proves it: resources/presence.ts): at most once a minute, when the machine misses, and once
// more when it leaves, for the time up to its last proof. Heartbeats prove nothing. What a
// machine never proved is never paid.
export const CONTRACT_ACCRUAL_MS = 60_000;

const nothing = () => {};

/** Up to when a dedicated machine may be paid now: its last proof. */
export const provenUntil = (m: LiveMachine): number => m.proof?.provenUntil ?? m.contractPaidUntil ?? m.contractStartAt ?? 0;

/**
 * Pays a dedicated machine its share of the contract for presence proved up to `upTo` (ms), in
 * `tx`; returns what to apply to memory once `tx` has committed.
 */
export async function accrueContract(tx: Tx, m: LiveMachine, upTo: number): Promise<() => void> {
  if (m.kind !== "dedicated" || m.contractPriceMicro === null || m.departsAt === null || m.contractStartAt === null) return nothing;
  const from = m.contractPaidUntil ?? m.contractStartAt;
  const a = contractAccrual({
    contractPrice: toCredits(m.contractPriceMicro),
    startAt: m.contractStartAt / 1000,
    departsAt: m.departsAt / 1000,
    paidUntil: from / 1000,
    provenUntil: upTo / 1000,
  });
  const paidUntil = Math.round(a.paidUntil * 1000);
  let amount = toMicro(a.amount);
  // Rounding never takes the total past the contract.
  const left = m.contractPriceMicro - m.contractPaidMicro;
  if (amount > left) amount = left;
  if (amount <= 0n || paidUntil <= from) return nothing;
  await post(tx, contract({ machineId: m.id, producerId: m.ownerId, amount, fromMs: from, toMs: paidUntil }));
  await tx.machine.update({ where: { id: m.id }, data: { contractPaidUntil: new Date(paidUntil), contractPaidMicro: { increment: amount } } });
  return () => {
    // A proof after a miss may have moved it on meanwhile (forfeiting the time between): never back.
    m.contractPaidUntil = Math.max(m.contractPaidUntil ?? 0, paidUntil);
    m.contractPaidMicro += amount;
  };
}

/**
 * After the market was down it could not hear its dedicated machines: they were paid up to the
 * last proof it accrued (what was proved since is lost with the memory that held it), the outage
 * itself is not paid, and the proof starts again from now, as at the contract's start.
 */
export async function resumeContract(market: Market, m: LiveMachine, now: number): Promise<void> {
  if (m.kind !== "dedicated") return;
  const apply = await market.db.$transaction(async (tx) => {
    const apply = await accrueContract(tx, m, provenUntil(m));
    await tx.machine.update({ where: { id: m.id }, data: { contractPaidUntil: new Date(Math.max(now, m.contractPaidUntil ?? 0)) } });
    return apply;
  });
  apply();
  m.contractPaidUntil = Math.max(now, m.contractPaidUntil ?? 0);
  m.proof = freshProof(m.contractPaidUntil);
}

/** The sweeper's accrual: every dedicated machine not paid for a minute is paid up to its last proof. */
export async function accrueContracts(market: Market): Promise<void> {
  const now = market.clock.now();
  for (const m of market.state.machines.values()) {
    if (m.kind !== "dedicated" || now - (m.contractPaidUntil ?? m.contractStartAt ?? now) < CONTRACT_ACCRUAL_MS) continue;
    await market.serial(async () => {
      if (!market.state.machines.has(m.id)) return;
      (await market.db.$transaction((tx) => accrueContract(tx, m, provenUntil(m))))();
    });
  }
}

/**
 * What contracts already promise, in `tx`, under the lock every manager takes to decide a
 * dedicated offer (db/sql lockContracts), held until `tx` ends: the account's and the market's,
 * whichever manager holds their machines (each manager's memory knows only its own), micro-credits.
 */
export async function promisedContracts(tx: Tx, ownerId: string): Promise<{ owner: bigint; market: bigint }> {
  const run = viaPrisma(tx);
  await runStatement(run, lockContracts, {});
  return owedByContracts(run, ownerId);
}

/** What live dedicated contracts still owe, the account's and the market's in all, whichever manager holds their machines (micro-credits). */
export async function owedByContracts(run: Runner, ownerId: string): Promise<{ owner: bigint; market: bigint }> {
  const [row] = await runStatement(run, contractsPromised, { ownerId });
  return { owner: BigInt(row?.owner ?? "0"), market: BigInt(row?.market ?? "0") };
}

/**
 * What the market can still promise a new contract: what it may spend (its balance above its
 * floor, minus its reserve) less what the contracts every manager holds will still cost.
 */
export async function contractBudget(tx: Tx, promised: bigint): Promise<number> {
  return toCredits((await spendable(tx, { kind: "market" })) - promised);
}

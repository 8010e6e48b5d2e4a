import { contractAccrual } from "@cyclemarket/costbenefit";
import type { Market } from "../market/market.ts";
import type { LiveMachine } from "../market/live.ts";
import { post, spendable, toCredits, toMicro, type Tx } from "../ledger/ledger.ts";
import { contract } from "../ledger/entries.ts";

// Dedicated contracts are paid as the capacity is delivered (costbenefit `contractAccrual`): at
// most once a minute, and once more when the machine leaves, for the time up to the last moment it
// proved it was there (a result of its accepted: LiveMachine.provenAt). Heartbeats prove nothing:
// a machine that only heartbeats is never paid, and one that does not take the tasks queued for
// it is taken out of the market (sweeper.ts). What a machine never proved is never paid.
export const CONTRACT_ACCRUAL_MS = 60_000;

const nothing = () => {};

/** Up to when a machine's contract may be paid: the last moment it proved it was there. */
export const provenUntil = (m: LiveMachine): number => m.provenAt ?? 0;

/**
 * Pays a dedicated machine its share of the contract for the time proven up to `upTo` (ms), in
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
    m.contractPaidUntil = paidUntil;
    m.contractPaidMicro += amount;
  };
}

/**
 * After the market was down it could not hear its dedicated machines: they are paid up to what
 * they proved before, and the outage itself is not paid.
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
}

/** The sweeper's accrual: every dedicated machine not paid for a minute is paid up to what it proved. */
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
 * What the market can still promise a new contract: what it may spend (its balance above its
 * floor, minus its reserve) less what the contracts it holds will still cost.
 */
export async function contractBudget(market: Market): Promise<number> {
  let owed = 0n;
  for (const m of market.state.machines.values()) {
    if (m.kind === "dedicated" && m.contractPriceMicro !== null) owed += m.contractPriceMicro - m.contractPaidMicro;
  }
  return toCredits((await spendable(market.db, { kind: "market" })) - owed);
}

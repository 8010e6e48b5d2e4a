import { describe, expect, it } from "vitest";
import { withDb, expectLedgerBalances } from "../support/books.ts";
import { managersOnOneDatabase } from "../support/managers.ts";
import { clientFor, refusal, signIn } from "../support/market.ts";
import { signUp, waitFor, type ManagerProcess } from "../support/processes.ts";

// Attacks on the market's money that need several Market Managers on one PostgreSQL (issue 47),
// each made as a participant would make it against two real managers, and each answered by the
// market: refused with its reason, or paid exactly once, with the ledger at zero.

const { database, start } = await managersOnOneDatabase("cyclemarket-managers-money-");
const first = await start("manager-1");
const second = await start("manager-2");
const admin = await signIn(first.url, first.admin!.email, first.admin!.password);
await waitFor("both managers to see each other alive", async () => ((await admin.admin.managers.query()).managers.filter((m) => m.alive).length === 2 ? true : undefined), 20_000);

/** A confirmed producer's API token, signed up at the first manager; a worker's client for it at each manager. */
async function producer(email: string) {
  const account = await signUp(first.url, email, ["producer"], first.outbox);
  const { token } = await account.account.tokens.create.mutate({ name: "rack" });
  const at = (m: ManagerProcess) => clientFor(m.url, { authorization: `Bearer ${token}` });
  return { account, token, at };
}

const hardware = { memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, userAgent: "test", speed: 1, pricePerSecond: 0 };
const dedicated = (name: string, contractPrice: number) => ({ ...hardware, name, kind: "dedicated" as const, slots: 64, contractPrice, departsAt: Date.now() + 86_400_000 });

/** What the account's active dedicated machines are still owed, across every manager (credits). */
const owedTo = (userId: string) =>
  withDb(database.url, async (db) => {
    const rows = await db.machine.findMany({ where: { ownerId: userId, kind: "dedicated", status: "active" }, select: { contractPriceMicro: true, contractPaidMicro: true, managerId: true } });
    return { owed: rows.reduce((s, r) => s + Number(r.contractPriceMicro! - r.contractPaidMicro), 0) / 1e6, managers: rows.map((r) => r.managerId).sort() };
  });

describe("a dedicated contract's ceiling across managers", () => {
  // The ceiling (costbenefit contractCeiling) bounds what the market may owe one account in
  // contracts: a confirmed account new to the market may be promised 10 credits. The attack: the
  // same account offers a second dedicated machine, without an offer key, to the other manager,
  // which counted only the contracts it held itself, and is promised twice its ceiling.
  it("counts the contracts every manager holds for the account", async () => {
    const lessor = await producer("twice-lessor@example.test");
    const { offer } = await lessor.at(first).worker.register.mutate(dedicated("rack-a", 6));
    expect(offer?.[0]?.code).toBe("offer-accepted");
    const second6 = await refusal(lessor.at(second).worker.register.mutate(dedicated("rack-b", 6)));
    expect(second6).toMatchObject({ code: "offer-refused", refusal: { code: "offer-over-standing", contractPrice: 6, ceiling: 10 } });
    expect((second6.refusal as { promised: number }).promised).toBeGreaterThan(5.9);
    const me = (await lessor.account.account.me.query())!;
    expect(await owedTo(me.id)).toEqual({ owed: 6, managers: ["manager-1"] });
  });

  // The same, raced: one offer to each manager at the same moment. At most one is promised.
  it("lets at most one of two offers made at once to two managers through", async () => {
    const lessor = await producer("racing-lessor@example.test");
    const answers = await Promise.allSettled([lessor.at(first).worker.register.mutate(dedicated("race-a", 6)), lessor.at(second).worker.register.mutate(dedicated("race-b", 6))]);
    expect(answers.filter((a) => a.status === "fulfilled")).toHaveLength(1);
    const refused = answers.find((a) => a.status === "rejected");
    expect(await refusal(Promise.reject((refused as PromiseRejectedResult).reason))).toMatchObject({ code: "offer-refused", refusal: { code: "offer-over-standing" } });
    const me = (await lessor.account.account.me.query())!;
    expect((await owedTo(me.id)).owed).toBe(6);
    await withDb(database.url, expectLedgerBalances);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { DEFAULT_BENEFIT_CREDITS } from "../../apps/web/lib/default-benefit.ts";

// Credits can be added: an admin grants them from the market's account (the entry names the admin
// and the reason, and the consumer's statement shows it), a user moves what their machines earned
// to their consumer balance, each at most once per click. And a quote never says "admitted" for a
// job the balance cannot escrow: it says what the job would cost and what is missing.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
let admin: Client;
let consumer: Client;
// Sells and buys: their machine earns, and they move the earnings to pay for their own jobs.
let both: Client;
let worker: ReturnType<TestMarket["tokenClient"]>;
let machineId: string;
const STARTING = 100;

const db = () => market.manager.services.db;
const entries = (kind: string) => db().ledgerEntry.count({ where: { kind } });
const pi = (value: number, name = "pi") => ({
  name,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 100_000 }, taskCount: 3 },
  benefit: { kind: "constant" as const, value },
});
/** Worth running at a benefit of 1,000, and whose escrow (its price and a contingency) is over a new account's balance. */
const big = { ...pi(1000, "big"), source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 100_000_000 }, taskCount: 400 } };

beforeAll(async () => {
  // A new account's starting credits as the market gives them by default.
  market = await startTestMarket({ STARTING_CREDITS: String(STARTING) });
  const { email, password } = market.manager.admin!;
  admin = await market.signIn(email, password);
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  both = await market.signUp("both@example.test", ["consumer", "producer"]);
  worker = market.tokenClient((await both.account.tokens.create.mutate({ name: "rack", scopes: ["produce"] })).token);
  ({ machineId } = await worker.worker.register.mutate({
    name: "rack", kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test",
  }));
});
afterAll(() => market?.stop());

/** Runs every task leased to the machine until the job is done, reporting a plausible output. */
async function runToCompletion(owner: Client, jobId: string) {
  const text = "3.14 100000\n";
  const stdout = Buffer.from(text).toString("base64");
  const outputHash = createHash("sha256").update(text).digest("hex");
  while ((await owner.jobs.get.query({ jobId })).status !== "completed") {
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 4 });
    await worker.worker.reportMany.mutate({ reports: leases.map((l) => ({ machineId, leaseId: l.leaseId, exitCode: 0, elapsedMs: 400, stdout, stderr: "", outputHash })) });
  }
}

describe("an admin's grant", () => {
  it("moves credits from the market's account to the consumer's, naming the admin and the reason on their statement, once per grant", async () => {
    const grantId = randomUUID();
    const grant = { grantId, email: "Buyer@Example.test", credits: 25.5, reason: "refund for a failed job" };
    expect(await admin.admin.grantCredits.mutate(grant)).toEqual({ granted: 25.5, to: "buyer@example.test", already: false });
    const { consumerBalance, lines } = await consumer.ledger.statement.query();
    expect(consumerBalance).toBe(STARTING + 25.5);
    expect(lines[0]).toMatchObject({ kind: "admin-grant", account: "consumer", amount: 25.5, memo: { admin: "Market admin", reason: "refund for a failed job" } });

    // A second click, or the same request retried, grants nothing more; so do two at once.
    expect(await admin.admin.grantCredits.mutate(grant)).toEqual({ granted: 25.5, to: "buyer@example.test", already: true });
    const twice = { ...grant, grantId: randomUUID(), credits: 4.5, reason: "a prize" };
    const answers = await Promise.all([admin.admin.grantCredits.mutate(twice), admin.admin.grantCredits.mutate(twice)]);
    expect(answers.map((a) => a.already).sort()).toEqual([false, true]);
    expect((await consumer.ledger.balance.query()).consumerBalance).toBe(STARTING + 30);
    expect(await entries("admin-grant")).toBe(2);

    // The admin sees it among the latest grants, and counts it as a gift, not a loss of trading.
    expect((await admin.admin.grants.query())[1]).toMatchObject({ to: "buyer@example.test", credits: 25.5, by: "Market admin", reason: "refund for a failed job" });
    const { books } = await admin.admin.overview.query();
    expect(books.adminGranted).toBeCloseTo(30, 6);
    expect(books.granted).toBeCloseTo(books.startingCredits + 30, 6);
    expect(books.profit).toBeCloseTo(books.marketBalance + books.granted, 6);
    expect(books.balanced).toBe(true);
    await expectLedgerBalances(db());
  });

  it("is refused with the limit or the reason named, changing nothing", async () => {
    const before = (await consumer.ledger.balance.query()).consumerBalance;
    const grant = (patch: object) => admin.admin.grantCredits.mutate({ grantId: randomUUID(), email: "buyer@example.test", credits: 10, reason: "top-up", ...patch });
    expect((await refusal(grant({ credits: 0 }))).message).toContain("Grant more than 0 credits.");
    expect((await refusal(grant({ credits: 2_000_000 }))).message).toContain("At most 1,000,000 credits in one grant.");
    expect((await refusal(grant({ credits: 0.0000001 }))).message).toContain("at most 6 decimals");
    expect((await refusal(grant({ reason: " x " }))).message).toContain("Say why, in 3 to 200 characters.");
    expect((await refusal(grant({ reason: "y".repeat(201) }))).message).toContain("at most 200 characters");
    expect((await refusal(grant({ reason: "a\u0007bell" }))).message).toContain("control characters");
    expect((await refusal(grant({ grantId: "twice" }))).message).toContain("grantId must be a UUID");
    expect(await refusal(grant({ email: "nobody@example.test" }))).toMatchObject({ code: "not-found", what: "account" });
    await market.signUp("seller-only@example.test", ["producer"]);
    expect(await refusal(grant({ email: "seller-only@example.test" }))).toMatchObject({ code: "not-a-consumer", email: "seller-only@example.test" });
    // Only an admin, signed in: not a consumer, not a token.
    expect((await refusal(consumer.admin.grantCredits.mutate({ grantId: randomUUID(), email: "buyer@example.test", credits: 10, reason: "for me" }))).code).toBe("trpc:FORBIDDEN");
    expect((await refusal(worker.admin.grantCredits.mutate({ grantId: randomUUID(), email: "buyer@example.test", credits: 10, reason: "for me" }))).code).toBe("trpc:FORBIDDEN");

    // The market's account may go down to minus its reserve and no further.
    const marketBalance = (await admin.admin.overview.query()).books.marketBalance;
    await admin.admin.settings.set.mutate({ marketReserve: Math.ceil(-marketBalance) + 5 });
    try {
      expect(await refusal(grant({ credits: 50 }))).toMatchObject({ code: "insufficient-credits", account: "market", needed: 50 });
    } finally {
      await admin.admin.settings.set.mutate({ marketReserve: 1_000_000 });
    }
    expect((await consumer.ledger.balance.query()).consumerBalance).toBe(before);
    expect(await entries("admin-grant")).toBe(2);
    await expectLedgerBalances(db());
  });
});

describe("moving producer earnings to the consumer balance", () => {
  it("moves everything earned in one call, once per click, and leaves the earnings as earned", async () => {
    const { jobId } = await consumer.jobs.submit.mutate(pi(10, "paid for"));
    await runToCompletion(consumer, jobId);
    const earned = (await both.ledger.balance.query()).producerBalance;
    expect(earned).toBeGreaterThan(0);
    const earnedToday = (await both.ledger.earnings.query()).earnedLastDay;
    const paidBefore = (await admin.admin.overview.query()).books.paidToProducers;

    const transferId = randomUUID();
    expect(await both.ledger.transferEarnings.mutate({ transferId })).toEqual({ moved: earned, already: false });
    const after = await both.ledger.statement.query();
    expect(after.producerBalance).toBe(0);
    expect(after.consumerBalance).toBeCloseTo(STARTING + earned, 6);
    expect(after.lines.slice(0, 2)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: "earnings-transfer", account: "producer", amount: -earned }),
        expect.objectContaining({ kind: "earnings-transfer", account: "consumer", amount: earned }),
      ]),
    );
    // A double click: the same move answers again, and nothing more moves.
    expect(await both.ledger.transferEarnings.mutate({ transferId })).toEqual({ moved: earned, already: true });
    expect(await refusal(both.ledger.transferEarnings.mutate({ transferId: randomUUID() }))).toMatchObject({ code: "no-earnings-to-move" });
    expect(await entries("earnings-transfer")).toBe(1);

    // What the machine earned and what producers were paid are what they were.
    expect((await both.ledger.earnings.query()).earnedLastDay).toBeCloseTo(earnedToday, 6);
    const { books } = await admin.admin.overview.query();
    expect(books.paidToProducers).toBeCloseTo(paidBefore, 6);
    expect(books.producerBalances).toBeCloseTo(paidBefore - earned, 6);
    expect(books.balanced).toBe(true);
    await expectLedgerBalances(db());
  });

  it("never moves more than was earned, and only for the signed-in user", async () => {
    const { jobId } = await consumer.jobs.submit.mutate(pi(10, "paid for again"));
    await runToCompletion(consumer, jobId);
    const earned = (await both.ledger.balance.query()).producerBalance;
    expect(await refusal(both.ledger.transferEarnings.mutate({ transferId: randomUUID(), credits: earned + 1 }))).toMatchObject({ code: "insufficient-credits", account: "producer" });
    expect((await refusal(both.ledger.transferEarnings.mutate({ transferId: randomUUID(), credits: -1 }))).message).toContain("Move more than 0 credits.");
    // A token does not move money, whatever its scope; a producer who does not buy has no balance to move to.
    const script = market.tokenClient((await both.account.tokens.create.mutate({ name: "scripts", scopes: ["consume"] })).token);
    expect(await refusal(script.ledger.transferEarnings.mutate({ transferId: randomUUID() }))).toMatchObject({ code: "token-scope" });
    const seller = await market.signIn("seller-only@example.test", "correct horse battery");
    expect((await refusal(seller.ledger.transferEarnings.mutate({ transferId: randomUUID() }))).code).toBe("trpc:FORBIDDEN");
    // Part of it moves when asked.
    const half = Math.floor(earned * 500_000) / 1_000_000;
    expect((await both.ledger.transferEarnings.mutate({ transferId: randomUUID(), credits: half })).moved).toBe(half);
    expect((await both.ledger.balance.query()).producerBalance).toBeCloseTo(earned - half, 6);
    await expectLedgerBalances(db());
  });
});

describe("a quote", () => {
  it("never says admitted for a job the balance cannot escrow: it says what it would cost and what is missing", async () => {
    const newcomer = await market.signUp("newcomer@example.test", ["consumer"]);
    expect((await newcomer.ledger.balance.query()).consumerBalance).toBe(STARTING);

    // Within the balance: admitted, with what it would hold.
    const fits = await newcomer.jobs.quote.mutate(pi(10));
    expect(fits).toMatchObject({ outcome: "admitted", escrow: expect.any(Number), balance: STARTING });
    // What it can be charged: its price (no maxSpend set), never the highest benefit.
    expect("escrow" in fits && Math.abs(fits.escrow - fits.price) < 1e-6 && fits.escrow < 10).toBe(true);

    // Worth running, but its escrow is over the balance: not admitted, with the price and what is missing.
    const over = await newcomer.jobs.quote.mutate(big);
    expect(over.outcome).toBe("rejected");
    const short = over.reasons[0] as { code: string; needed: number; balance: number; price: number; missing: number };
    expect(short).toMatchObject({ code: "insufficient-credits", balance: STARTING });
    expect(short.needed).toBeGreaterThan(STARTING);
    expect(short.missing).toBeCloseTo(short.needed - STARTING, 6);
    expect(short.price).toBeGreaterThan(0);
    // The engine's reason it is worth running stands beside the shortfall.
    expect(over.reasons.map((r) => r.code)).toEqual(expect.arrayContaining([expect.stringMatching(/^(profitable|always-admit)$/)]));
    // The submission says the same, and nothing is held.
    expect(await refusal(newcomer.jobs.submit.mutate(big))).toMatchObject({ code: "insufficient-credits", balance: STARTING });
    expect((await newcomer.ledger.balance.query()).inEscrow).toBe(0);

    // Credits added, the same job is admitted.
    await admin.admin.grantCredits.mutate({ grantId: randomUUID(), email: "newcomer@example.test", credits: Math.ceil(short.missing) + 10, reason: "to try a bigger job" });
    expect(await newcomer.jobs.quote.mutate(big)).toMatchObject({ outcome: "admitted" });
  });

  it("with the form's default benefit fits a new account's balance, job after job", async () => {
    const newcomer = await market.signUp("defaults@example.test", ["consumer"]);
    for (let i = 0; i < 3; i++) {
      const { jobId, decision } = await newcomer.jobs.submit.mutate(pi(DEFAULT_BENEFIT_CREDITS, `default ${i}`));
      expect(decision.outcome).toBe("admitted");
      await runToCompletion(newcomer, jobId);
    }
    expect(await newcomer.jobs.quote.mutate(pi(DEFAULT_BENEFIT_CREDITS))).toMatchObject({ outcome: "admitted" });
    expect((await newcomer.ledger.balance.query()).consumerBalance).toBeGreaterThan(STARTING - 3 * DEFAULT_BENEFIT_CREDITS);
  });
});

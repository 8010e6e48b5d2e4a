import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { startTestMarket, type TestMarket } from "../support/market.ts";

// A producer's earnings page (ledger.earnings) and chart (ledger.earningsSeries) are summed by
// PostgreSQL: they must say what the ledger says the producer was paid, in the right hours and
// days, and its share of what consumers were charged for the jobs it worked on, however the runs
// were split between producers.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
let consumer: Client;
const sellers: { client: Client; worker: ReturnType<TestMarket["tokenClient"]>; machineId: string; userId: string }[] = [];
const db = () => market.manager.services.db;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

beforeAll(async () => {
  market = await startTestMarket();
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  for (const name of ["a", "b"]) {
    const client = await market.signUp(`seller-${name}@example.test`, ["producer"]);
    const worker = market.tokenClient((await client.account.tokens.create.mutate({ name })).token);
    const { machineId } = await worker.worker.register.mutate({
      name, kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test",
    });
    const userId = (await db().machine.findUniqueOrThrow({ where: { id: machineId }, select: { ownerId: true } })).ownerId;
    sellers.push({ client, worker, machineId, userId });
  }
});
afterAll(() => market?.stop());

const job = (name: string, taskCount: number, nameToProducers = false) => ({
  name,
  nameToProducers,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 1000 }, taskCount },
  benefit: { kind: "constant" as const, value: 200 },
});

/** Runs up to `max` tasks on each seller's machine in turn (the market chooses which), `rounds` times or until none is left. */
async function run(rounds = Infinity) {
  for (let r = 0; r < rounds; r++) {
    let ran = 0;
    for (const s of sellers) {
      const { leases } = await s.worker.worker.lease.mutate({ machineId: s.machineId, max: 1 });
      for (const lease of leases) {
        const stdout = Buffer.from("3 4\n");
        await s.worker.worker.report.mutate({
          machineId: s.machineId, leaseId: lease.leaseId, exitCode: 0, stdout: stdout.toString("base64"), stderr: "",
          outputHash: createHash("sha256").update(stdout).digest("hex"), elapsedMs: 20 + 10 * r,
        });
        ran++;
      }
    }
    if (!ran) return;
  }
}

/** What the ledger says `userId` was paid for runs, and for each of its jobs. */
async function paidTo(userId: string) {
  const account = await db().ledgerAccount.findUniqueOrThrow({ where: { kind_userId: { kind: "producer", userId } } });
  const postings = await db().ledgerPosting.findMany({ where: { accountId: account.id, entry: { kind: "payment" } }, select: { amountMicro: true, entryId: true, entry: { select: { jobId: true } } } });
  const byJob = new Map<string, bigint>();
  for (const p of postings) byJob.set(p.entry.jobId!, (byJob.get(p.entry.jobId!) ?? 0n) + p.amountMicro);
  return { account, postings, total: postings.reduce((n, p) => n + p.amountMicro, 0n), byJob };
}

const credits = (micro: bigint) => Number(micro) / 1e6;

/** Moves a payment entry and its postings `ms` into the past, as if it had been paid then. */
async function age(entryId: string, ms: number) {
  await db().$executeRawUnsafe(`UPDATE "LedgerEntry" SET "createdAt" = "createdAt" - $2::float8 * interval '1 millisecond' WHERE id = $1`, entryId, ms);
  await db().$executeRawUnsafe(`UPDATE "LedgerPosting" SET "createdAt" = "createdAt" - $2::float8 * interval '1 millisecond' WHERE "entryId" = $1`, entryId, ms);
}

describe("a producer's earnings", () => {
  it("say what the ledger paid it, and its share of the charges of the settled jobs it worked on", async () => {
    const shared = await consumer.jobs.submit.mutate(job("shared", 6));
    await run();
    const alone = await consumer.jobs.submit.mutate(job("second", 2));
    await run();
    // A job still running is paid for but not settled: no charge yet to take a share of.
    const open = await consumer.jobs.submit.mutate(job("open", 4));
    await run(1);
    expect((await consumer.jobs.get.query({ jobId: shared.jobId })).status).toBe("completed");
    expect((await consumer.jobs.get.query({ jobId: alone.jobId })).status).toBe("completed");
    expect((await consumer.jobs.get.query({ jobId: open.jobId })).status).not.toBe("completed");

    const [a, b] = [await paidTo(sellers[0]!.userId), await paidTo(sellers[1]!.userId)];
    // Both sellers ran some of the shared job, so a share below the whole is what is tested.
    expect(a.byJob.get(shared.jobId)).toBeGreaterThan(0n);
    expect(b.byJob.get(shared.jobId)).toBeGreaterThan(0n);

    for (const [seller, paid] of [[sellers[0]!, a], [sellers[1]!, b]] as const) {
      const earnings = await seller.client.ledger.earnings.query();
      // The balance beside them is read in the same statement: nothing was paid out of it.
      expect(earnings.producerBalance).toBeCloseTo(credits(paid.total), 6);
      expect(earnings.earnedLastHour).toBeCloseTo(credits(paid.total), 6);
      expect(earnings.earnedLastDay).toBeCloseTo(credits(paid.total), 6);
      expect(earnings.hourly.reduce((n, h) => n + h.earned, 0)).toBeCloseTo(credits(paid.total), 6);
      expect(earnings.hourly.every((h) => h.hour % HOUR === 0)).toBe(true);
      let charged = 0;
      let paidSettled = 0n;
      for (const jobId of [shared.jobId, alone.jobId]) {
        const own = paid.byJob.get(jobId) ?? 0n;
        if (!own) continue;
        const j = await db().job.findUniqueOrThrow({ where: { id: jobId }, select: { chargedMicro: true } });
        const all = (await paidTo(sellers[0]!.userId)).byJob.get(jobId)! + ((await paidTo(sellers[1]!.userId)).byJob.get(jobId) ?? 0n);
        charged += (credits(j.chargedMicro!) * Number(own)) / Number(all);
        paidSettled += own;
      }
      expect(earnings.paidForThatWork).toBeCloseTo(credits(paidSettled), 6);
      expect(earnings.chargedForTheirWork).toBeCloseTo(charged, 6);
      expect(earnings.chargedForTheirWork).toBeGreaterThan(0);
    }
  });

  it("count each payment in the hour and day it was paid, in the page and in the chart", async () => {
    const seller = sellers[0]!;
    const before = await paidTo(seller.userId);
    const [yesterday, lastWeek] = before.postings;
    await age(yesterday!.entryId, 30 * HOUR);
    await age(lastWeek!.entryId, 10 * DAY);
    const now = Date.now();

    const earnings = await seller.client.ledger.earnings.query();
    const recent = before.total - yesterday!.amountMicro - lastWeek!.amountMicro;
    expect(earnings.earnedLastHour).toBeCloseTo(credits(recent), 6);
    expect(earnings.earnedLastDay).toBeCloseTo(credits(recent), 6);
    expect(earnings.hourly.reduce((n, h) => n + h.earned, 0)).toBeCloseTo(credits(recent), 6);

    const series = await seller.client.ledger.earningsSeries.query();
    expect(series.hourly).toHaveLength(48);
    expect(series.daily).toHaveLength(30);
    // The chart's two days hold the payment of 30 hours ago in its own hour; its thirty days hold every payment.
    expect(series.hourly.reduce((n, h) => n + h.earned, 0)).toBeCloseTo(credits(recent + yesterday!.amountMicro), 6);
    const hourOf = (t: number, size: number) => Math.floor(t / size) * size;
    const then = series.hourly.find((h) => h.at === hourOf(now - 30 * HOUR, HOUR))!;
    expect(then.earned).toBeGreaterThanOrEqual(credits(yesterday!.amountMicro) - 1e-9);
    expect(series.daily.reduce((n, d) => n + d.earned, 0)).toBeCloseTo(credits(before.total), 6);
    expect(series.daily.find((d) => d.at === hourOf(now - 10 * DAY, DAY))!.earned).toBeCloseTo(credits(lastWeek!.amountMicro), 6);
  });

  it("are empty for a user who never produced", async () => {
    const earnings = await consumer.ledger.earnings.query();
    expect(earnings).toEqual({ producerBalance: 0, earnedLastHour: 0, earnedLastDay: 0, hourly: [], chargedForTheirWork: 0, paidForThatWork: 0 });
    const series = await consumer.ledger.earningsSeries.query();
    expect(series.daily.every((d) => d.earned === 0)).toBe(true);
    expect(series.hourly.every((h) => h.earned === 0)).toBe(true);
  });

  it("name a job on a producer's statement only when its consumer allows it, and its id always", async () => {
    const hidden = await consumer.jobs.submit.mutate(job("kept to myself", 2));
    const shown = await consumer.jobs.submit.mutate(job("shown to producers", 2, true));
    await run();
    const lines = [...(await sellers[0]!.client.ledger.statement.query()).lines, ...(await sellers[1]!.client.ledger.statement.query()).lines].filter((l) => l.kind === "payment");
    const of = (jobId: string) => lines.filter((l) => l.jobId === jobId);
    expect(of(hidden.jobId).length).toBeGreaterThan(0);
    expect(of(shown.jobId).length).toBeGreaterThan(0);
    expect(of(hidden.jobId).every((l) => l.jobName === null && !l.ownJob)).toBe(true);
    expect(of(shown.jobId).every((l) => l.jobName === "shown to producers" && !l.ownJob)).toBe(true);
    // Its owner sees both by name, as their own.
    const own = (await consumer.ledger.statement.query()).lines.filter((l) => l.jobId === hidden.jobId);
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((l) => l.jobName === "kept to myself" && l.ownJob)).toBe(true);
    // Run again keeps the choice.
    expect((await consumer.jobs.jobFile.query({ jobId: shown.jobId })).nameToProducers).toBe(true);
  });

  it("of other producers' machines are the going rate a producer sees beside its price", async () => {
    const [a, b] = sellers;
    const rate = await a!.client.machines.goingRate.query({ speed: 1 });
    // One other machine: too few to call "similar", so every other producer's machine is read.
    expect(rate).toMatchObject({ machines: 1, similar: false, ask: { low: 0.5, median: 0.5, high: 0.5 } });
    const earned = await b!.client.ledger.earnings.query();
    expect(rate.earnedLastHour!.median).toBeCloseTo(earned.earnedLastHour, 6);
    expect(earned.earnedLastHour).toBeGreaterThan(0);
  });
});

describe("a consumer's spending", () => {
  it("is what its settled jobs were charged, in the hour and day they were settled", async () => {
    const settled = await db().job.findMany({ where: { owner: { email: "buyer@example.test" }, chargedMicro: { not: null } }, select: { chargedMicro: true } });
    const total = settled.reduce((n, j) => n + j.chargedMicro!, 0n);
    expect(total).toBeGreaterThan(0n);
    const series = await consumer.ledger.spendingSeries.query();
    expect(series.hourly).toHaveLength(48);
    expect(series.daily).toHaveLength(30);
    expect(series.hourly.reduce((n, h) => n + h.spent, 0)).toBeCloseTo(credits(total), 6);
    expect(series.daily.reduce((n, d) => n + d.spent, 0)).toBeCloseTo(credits(total), 6);
    // A producer who never bought anything spent nothing.
    expect((await sellers[0]!.client.ledger.spendingSeries.query()).daily.every((d) => d.spent === 0)).toBe(true);
  });
});

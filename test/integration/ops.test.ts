import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";

// What an operator sees of a running market: its history filling in, the decision log, and the
// service endpoints a monitoring system scrapes.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
let admin: Client;
let consumer: Client;
let worker: ReturnType<TestMarket["tokenClient"]>;

beforeAll(async () => {
  market = await startTestMarket({ HISTORY_SAMPLE_MS: "200" });
  const { email, password } = market.manager.admin!;
  admin = await market.signIn(email, password);
  consumer = await market.signUp("ops-buyer@example.test", ["consumer"]);
  const producer = await market.signUp("ops-seller@example.test", ["producer"]);
  worker = market.tokenClient((await producer.account.tokens.create.mutate({ name: "rack" })).token);
});
afterAll(() => market?.stop());

const machine = { name: "ops-rack", kind: "opportunistic" as const, slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test" };
const job = { name: "ops pi", source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 100_000 }, taskCount: 3 }, benefit: { kind: "constant" as const, value: 50 } };

describe("the market's history", () => {
  it("records machines, slots and admissions as they happen, and reaches the present", async () => {
    const { machineId } = await worker.worker.register.mutate(machine);
    const { decision } = await consumer.jobs.submit.mutate(job);
    expect(decision.outcome).toBe("admitted");
    await expect
      .poll(async () => {
        const { samples } = await admin.admin.history.query({ seconds: 900 });
        const last = samples.at(-1);
        return { machines: last?.machinesOpportunistic, slots: last?.slotsOpportunistic, queued: last?.queuedTasks, admissions: samples.reduce((s, x) => s + x.admissions, 0) };
      }, { timeout: 10_000 })
      .toEqual({ machines: 1, slots: 2, queued: 3, admissions: 1 });
    const { samples, resolution } = await admin.admin.history.query({ seconds: 900 });
    expect(resolution).toBe(5);
    // A minute of work on an idle market has a price, and the engine gives it.
    expect(samples.at(-1)!.referencePrice).toBeGreaterThan(0);
    await worker.worker.depart.mutate({ machineId });
  });

  it("is for admins only", async () => {
    expect((await refusal(consumer.admin.history.query({ seconds: 900 }))).code).toBe("trpc:FORBIDDEN");
  });
});

describe("the decision log", () => {
  it("shows a job's admission with its reasons and where its tasks were placed, filterable by job and outcome", async () => {
    const { machineId } = await worker.worker.register.mutate({ ...machine, name: "ops-rack-2" });
    const { jobId } = await consumer.jobs.submit.mutate(job);
    const { decisions } = await admin.admin.decisions.query({ jobId });
    const admission = decisions.find((d) => d.outcome === "admission");
    expect(admission).toMatchObject({ jobId, jobName: "ops pi", user: "ops-buyer@example.test", tasks: 3 });
    expect(admission!.reasons.map((r) => r.code)).toContain("profitable");
    const placement = decisions.find((d) => d.outcome === "placement")!;
    expect(placement).toMatchObject({ machineId, machineName: "ops-rack-2", tasks: 3 });
    expect(placement.detail!.marginalCost).toEqual(expect.any(Number));
    expect(placement.detail!.expectedFinishAt).toBeGreaterThan(Date.now() - 60_000);
    // A three-task job is expected to finish within the hour, not in some later millennium.
    expect(placement.detail!.expectedFinishAt).toBeLessThan(Date.now() + 3_600_000);
    // The owner reads the same record from the job's page.
    expect((await consumer.jobs.decisions.query({ jobId, outcome: "admission" })).decisions.map((d) => d.id)).toEqual([admission!.id]);
    // A departure is logged with why, and its tasks are placed again.
    await worker.worker.depart.mutate({ machineId });
    const departures = (await admin.admin.decisions.query({ machineId, outcome: "departure" })).decisions;
    // Its queue held this job's 3 tasks and the 3 of the first test's job, placed again on it when it came.
    expect(departures).toMatchObject([{ outcome: "departure", tasks: 6, reasons: [{ code: "machine-left" }] }]);
    const again = (await admin.admin.decisions.query({ machineId, outcome: "placement" })).decisions.filter((d) => d.reasons.some((r) => r.code === "placed-again"));
    expect(again.map((d) => d.tasks)).toEqual([3]);
    expect((await admin.admin.decisions.query({ user: "nobody@example.test" })).decisions).toEqual([]);
  });

  it("pages without repeating or skipping a decision", async () => {
    const all = (await admin.admin.decisions.query({ pageSize: 200 })).decisions.map((d) => d.id);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { decisions: { id: string }[]; next: string | null } = await admin.admin.decisions.query({ pageSize: 2, cursor });
      paged.push(...page.decisions.map((d) => d.id));
      cursor = page.next;
    } while (cursor);
    expect(paged).toEqual(all);
    expect(all.length).toBeGreaterThan(3);
  });
});

describe("service endpoints", () => {
  it("answers /healthz at once and /readyz once the database answers", async () => {
    const health = await fetch(`${market.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true });
    const ready = await fetch(`${market.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, database: true, restored: true });
  });

  it("serves counters and histograms in the Prometheus text format", async () => {
    const res = await fetch(`${market.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^cyclemarket_decisions_total\{outcome="admission"\} [1-9]/m);
    expect(text).toMatch(/^cyclemarket_submissions_total\{outcome="admitted"\} [1-9]/m);
    expect(text).toMatch(/^cyclemarket_api_duration_seconds_count\{procedure="jobs.submit",type="mutation",ok="true"\} [1-9]/m);
    expect(text).toMatch(/^cyclemarket_db_pool_connections\{state="total"\} \d+/m);
    // The admission's statement went through the journal: how long it waited to be sent, and how long it took.
    expect(text).toMatch(/^cyclemarket_journal_seconds_count\{kind="admission",stage="wait"\} [1-9]/m);
    expect(text).toMatch(/^cyclemarket_journal_seconds_count\{kind="admission",stage="write"\} [1-9]/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).toMatch(/^cyclemarket_history_samples_total [1-9]/m);
  });
});

describe("the history's money", () => {
  it("keeps the ledger's running totals: what consumers were charged, what producers were paid, the market's profit", async () => {
    const { machineId } = await worker.worker.register.mutate(machine);
    const { jobId } = await consumer.jobs.submit.mutate(job);
    const text = "3.14 100000\n";
    const stdout = Buffer.from(text).toString("base64");
    const outputHash = createHash("sha256").update(text).digest("hex");
    // Every task the machine is given (the earlier test's job's too) runs, until this job is done.
    while ((await consumer.jobs.get.query({ jobId })).status !== "completed") {
      const { leases } = await worker.worker.lease.mutate({ machineId, max: 4 });
      await worker.worker.reportMany.mutate({ reports: leases.map((l) => ({ machineId, leaseId: l.leaseId, exitCode: 0, elapsedMs: 40, stdout, stderr: "", outputHash })) });
    }
    await worker.worker.depart.mutate({ machineId });
    expect((await consumer.jobs.get.query({ jobId })).status).toBe("completed");
    // Every job of the market is this consumer's (this one and the earlier tests').
    const charged = (await consumer.jobs.list.query()).reduce((sum, j) => sum + (j.charged ?? 0), 0);
    expect(charged).toBeGreaterThan(0);
    const { books } = await admin.admin.overview.query();
    const producerPaid = (await worker.ledger.statement.query()).producerBalance;
    expect(producerPaid).toBeGreaterThan(0);
    await expect
      .poll(async () => {
        const last = (await admin.admin.history.query({ seconds: 900 })).samples.at(-1)!;
        return { charged: last.charged, producerPaid: last.producerPaid, profit: last.profit };
      }, { timeout: 10_000 })
      .toEqual({ charged: expect.closeTo(charged, 6), producerPaid: expect.closeTo(producerPaid, 6), profit: expect.closeTo(books.profit, 6) });

    // A job's charge is written once, when it is settled: once settled long enough ago it is
    // summed once and kept, not read again each sample (the sum over every job grew with the
    // market's history). A sample an hour on keeps them all; a charge changed behind the market's
    // back afterwards is not read again, and the sample still says what was charged.
    const { takeSample } = await import("../../apps/market-manager/src/ops/sampler.ts");
    const later = Date.now() + 3_600_000;
    const chargedAt = async () => Number((await takeSample(market.manager.services.market, later)).chargedMicro) / 1e6;
    expect(await chargedAt()).toBeCloseTo(charged, 6);
    const db = market.manager.services.db;
    const row = await db.job.findUniqueOrThrow({ where: { id: jobId }, select: { chargedMicro: true } });
    await db.job.update({ where: { id: jobId }, data: { chargedMicro: row.chargedMicro! + 1_000_000n } });
    try {
      expect(await chargedAt()).toBeCloseTo(charged, 6);
    } finally {
      await db.job.update({ where: { id: jobId }, data: { chargedMicro: row.chargedMicro } });
    }
  });
});

describe("the admin's books", () => {
  it("say what every account of the ledger holds: the market's, the producers', the running jobs' escrow, the starting credits, and that it balances", async () => {
    const db = market.manager.services.db;
    // A job admitted and not yet run holds its escrow; the earlier tests' jobs were settled.
    const { machineId } = await worker.worker.register.mutate(machine);
    const { jobId, decision } = await consumer.jobs.submit.mutate({ ...job, name: "books" });
    expect(decision.outcome).toBe("admitted");
    try {
      const sum = async (where: object) => Number((await db.ledgerAccount.aggregate({ _sum: { balanceMicro: true }, where }))._sum.balanceMicro ?? 0n) / 1e6;
      const granted = Number((await db.ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { kind: "grant" }, account: { kind: "consumer" } } }))._sum.amountMicro ?? 0n) / 1e6;
      const { books } = await admin.admin.overview.query();
      const escrow = await sum({ kind: "escrow" });
      expect(escrow).toBeGreaterThan(0);
      expect(books.inEscrow).toBeCloseTo(escrow, 6);
      expect(books.inEscrow).toBeCloseTo((await consumer.jobs.get.query({ jobId })).escrowHeld, 6);
      expect(books.producerBalances).toBeCloseTo(await sum({ kind: "producer" }), 6);
      expect(books.marketBalance).toBeCloseTo(await sum({ kind: "market" }), 6);
      expect(granted).toBeGreaterThan(0);
      expect(books.granted).toBeCloseTo(granted, 6);
      expect(books.profit).toBeCloseTo(books.marketBalance + granted, 6);
      expect(await sum({})).toBe(0);
      expect(books.balanced).toBe(true);

      // Credits moved into an ended job's escrow (a settlement that left some behind) are out of
      // the books: the accounts they count no longer balance.
      const [settled] = await db.job.findMany({ where: { status: "completed" }, select: { id: true, ownerId: true }, take: 1 });
      const consumerAccount = { kind_userId: { kind: "consumer" as const, userId: settled!.ownerId } };
      const move = (micro: bigint) =>
        db.$transaction([
          db.ledgerAccount.update({ where: { jobId: settled!.id }, data: { balanceMicro: { increment: micro } } }),
          db.ledgerAccount.update({ where: consumerAccount, data: { balanceMicro: { decrement: micro } } }),
        ]);
      await move(1n);
      try {
        expect(await sum({})).toBe(0);
        expect((await admin.admin.overview.query()).books.balanced).toBe(false);
      } finally {
        await move(-1n);
      }
      expect((await admin.admin.overview.query()).books.balanced).toBe(true);
    } finally {
      await consumer.jobs.cancel.mutate({ jobId });
      await worker.worker.depart.mutate({ machineId });
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAT_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances, marketMicro } from "../support/books.ts";
import { runLease, type TestLease } from "../support/worker.ts";

// Lateness is paid by whoever caused it, and by the market's account only for the part its own
// downtime caused. The attack: one person's consumer and producer accounts (one firm's domain,
// so the producer's lateness relieves nothing) run a job whose curve falls to a large penalty
// after its deadline. The market is down for a few seconds while the job runs (a restart, as
// every market has). The producer then reports its run, finished at once, just after the
// deadline but less than the outage after it. The settlement asks what the benefit would have
// been "had the market not been down" as the benefit at the completion less the outage, as if
// the outage had pushed the completion back by all of its length: the market pays the penalty.

const RESERVE = 100_000;
const PENALTY = -5000;
const DEADLINE_S = 9;
let market: TestMarket;

beforeAll(async () => {
  market = await startTestMarket({ MARKET_RESERVE: String(RESERVE) });
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const marketBalance = async () => Number(await marketMicro(db())) / 1e6;

describe("a producer tied to the consumer, reporting just past the deadline after an outage", () => {
  it("costs the market nothing: the outage did not make the job late", async () => {
    const buyer = await market.signUp("late-buyer@onefirm.test", ["consumer"]);
    const seller = await market.signUp("late-seller@onefirm.test", ["producer"]);
    const worker = market.tokenClient((await seller.account.tokens.create.mutate({ name: "rack" })).token);
    const { machineId } = await worker.worker.register.mutate({ name: "rack", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test" });
    const holding = async () => {
      const [b, s] = [await buyer.ledger.statement.query(), await seller.ledger.statement.query()];
      return b.consumerBalance + b.inEscrow + s.producerBalance;
    };
    const before = await holding();
    const marketBefore = await marketBalance();

    const submittedAt = Date.now();
    const { jobId, decision } = await buyer.jobs.submit.mutate({
      name: "penalty",
      source: { kind: "upload", moduleBase64: Buffer.from(wat(CAT_WAT)).toString("base64"), tasks: [{ args: [], stdin: Buffer.from("hi").toString("base64") }], workPerTask: 1, memoryMbPerTask: 16 },
      benefit: { kind: "deadline", value: 20, deadline: DEADLINE_S, penalty: PENALTY },
    });
    expect(decision.outcome).toBe("admitted");
    const price = decision.outcome === "admitted" ? decision.price! : NaN;
    const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
    // The run is done at once: a second of work, planned to finish long before the deadline.
    const report = await runLease(worker, machineId, lease as TestLease, 1000);

    // The market is down for four seconds.
    await market.restart(4000);
    await worker.worker.heartbeat.mutate({ machineId, leaseIds: [lease!.leaseId] });
    // Reported just past the deadline, within the lease (its 10 s and the outage it was forgiven).
    await sleep(Math.max(0, submittedAt + (DEADLINE_S + 0.5) * 1000 - Date.now()));
    await worker.worker.report.mutate(report);

    const job = await buyer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    // Honest play: the person pays the quote and their machine earns its piece (0.01 credits);
    // lateness their own producer caused relieves nothing. Were the whole outage counted as delay,
    // the market would pay the penalty and the person gain about 5000 credits.
    expect((await holding()) - before, "what the person's accounts gained").toBeLessThanOrEqual(-price + 0.01 + 1e-6);
    expect((await marketBalance()) - marketBefore, "what the market's account gained").toBeGreaterThanOrEqual(0);
    await worker.worker.depart.mutate({ machineId });
    await expectLedgerBalances(db());
  });

  it("caused by the outage: the market waives the charge, pays out no penalty, and the report is paid", async () => {
    const buyer = await market.signUp("penalty-buyer@penalty-buyer.test", ["consumer"]);
    const seller = await market.signUp("penalty-seller@penalty-seller.test", ["producer"]);
    const worker = market.tokenClient((await seller.account.tokens.create.mutate({ name: "rack" })).token);
    const { machineId } = await worker.worker.register.mutate({ name: "rack", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test" });
    const marketBefore = await marketBalance();
    const submittedAt = Date.now();
    // Five seconds of work planned against a deadline at six, and a penalty past the market's
    // reserve: before, the settlement could not be written and the producer's report was refused.
    const { jobId, decision } = await buyer.jobs.submit.mutate({
      name: "huge penalty",
      source: { kind: "upload", moduleBase64: Buffer.from(wat(CAT_WAT)).toString("base64"), tasks: [{ args: [], stdin: Buffer.from("hi").toString("base64") }], workPerTask: 5, memoryMbPerTask: 16 },
      benefit: { kind: "deadline", value: 20, deadline: 6, penalty: -1e9 },
    });
    expect(decision.outcome).toBe("admitted");
    const price = decision.outcome === "admitted" ? decision.price! : NaN;
    const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
    const report = await runLease(worker, machineId, lease as TestLease, 5000);
    await market.restart(4000);
    await worker.worker.heartbeat.mutate({ machineId, leaseIds: [lease!.leaseId] });
    await sleep(Math.max(0, submittedAt + 7000 - Date.now()));
    expect((await worker.worker.report.mutate(report)).accepted).toBe(true);

    const job = await buyer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    expect(job.charged).toBe(0);
    expect(job.chargeReasons.map((r) => r.code)).toEqual(["charged-price", "lateness-relief", "lateness-unfunded"]);
    expect((await seller.ledger.statement.query()).producerBalance).toBeCloseTo(0.05, 9);
    // The market gave up the job's price (less the piece, paid from the escrow), and nothing more.
    expect((await marketBalance()) - marketBefore).toBeCloseTo(-0.05, 6);
    expect(price).toBeGreaterThan(0.05);
    await worker.worker.depart.mutate({ machineId });
    await expectLedgerBalances(db());
  });
});

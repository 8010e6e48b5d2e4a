import { describeDecisionReason } from "../../packages/client/src/cli/decision-words.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runLease } from "../support/worker.ts";
import { exampleModule, planExample } from "../../apps/market-manager/src/tasks/examples.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { applySettings } from "../../apps/market-manager/src/market/settings.ts";
import { main as cli } from "../../packages/client/src/cli/main.ts";
import { expectLedgerBalances, expectMarketInvariants } from "../support/books.ts";

// A job that gives no work estimate: its first tasks run as pilots, each paid for the work the
// market's clock vouches it did up to a small stated cap (the quote's provisional price), and the
// rest is planned from what the pilots were measured to do.

const SPEED = 0.65;
const PRICE = 0.001;

let market: TestMarket;
let consumer: Awaited<ReturnType<TestMarket["signUp"]>>;
let worker: ReturnType<TestMarket["tokenClient"]>;
let machineId: string;
let producer: Awaited<ReturnType<TestMarket["signUp"]>>;
const setPaused = (paused: boolean) => producer.machines.setControls.mutate({ machineId, controls: { paused } });

beforeAll(async () => {
  market = await startTestMarket();
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  producer = await market.signUp("seller@example.test", ["producer"]);
  worker = market.tokenClient((await producer.account.tokens.create.mutate({ name: "rack" })).token);
  ({ machineId } = await worker.worker.register.mutate({
    name: "rack",
    kind: "opportunistic",
    slots: 2,
    speed: SPEED,
    memoryPerSlotMb: 512,
    bandwidthBytesPerSecond: 1e7,
    pricePerSecond: PRICE,
    userAgent: "test",
  }));
});
afterAll(() => market?.stop());

/** An uploaded job of `n` Monte Carlo tasks that says nothing of their work. */
function withoutEstimate(name: string, n: number, value: number) {
  const module = Buffer.from(exampleModule("montecarlo")).toString("base64");
  const tasks = planExample("montecarlo", { samplesPerTask: 1000 }, n).tasks.map((args) => ({ args }));
  return { name, source: { kind: "upload" as const, moduleBase64: module, tasks }, benefit: { kind: "constant" as const, value } };
}

/**
 * Leases what the machine is given and reports each run as taking `elapsedMs`, once that long has
 * passed (the market measures a run by its own clock); returns the tasks' indexes.
 */
async function runLeased(elapsedMs: number): Promise<number[]> {
  const { leases } = await worker.worker.lease.mutate({ machineId, max: 2 });
  const db = market.manager.services.db;
  const indexes: number[] = [];
  if (leases.length) await new Promise((r) => setTimeout(r, elapsedMs));
  for (const lease of leases) {
    indexes.push((await db.task.findUniqueOrThrow({ where: { id: lease.taskId } })).index);
    await report(lease, elapsedMs);
  }
  return indexes;
}

async function report(lease: Awaited<ReturnType<typeof worker.worker.lease.mutate>>["leases"][number], elapsedMs: number) {
  const answer = await worker.worker.report.mutate(await runLease(worker, machineId, lease, elapsedMs));
  expect(answer.accepted).toBe(true);
}

/** What `cyclemarket status JOBID` prints for the consumer. */
async function cliStatus(jobId: string): Promise<string> {
  const token = (await consumer.account.tokens.create.mutate({ name: "cli", scopes: ["consume"] })).token;
  let out = "";
  const io = { out: (t: string) => void (out += t), err: () => {}, env: {}, tty: false };
  await cli(["status", jobId, "--url", market.url, "--token", token], io);
  return out;
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const codes = (decision: unknown) => ((decision as { reasons: { code: string }[] }).reasons ?? []).map((r) => r.code);

describe("a job without a work estimate", () => {
  it("is quoted as provisional, priced for its pilots at the most a pilot is paid for", async () => {
    const quote = await consumer.jobs.quote.mutate(withoutEstimate("quoted", 8, 100));
    expect(quote).toMatchObject({ outcome: "admitted", provisional: true, pilots: 3 });
    const pilotReason = quote.reasons.find((r) => r.code === "pilot-tasks");
    // Each pilot is priced at the pilot cap of 10 s of reference work, not its 120 s wall-time limit.
    expect(pilotReason).toMatchObject({ pilots: 3, tasks: 8, provisionalWorkPerTask: 10, wallSeconds: 120 });
    expect(quote.outcome === "admitted" && quote.priceParts?.producerPayments).toBeCloseTo((3 * 10 * PRICE) / SPEED);
    // The quote states the pilots' cost as a ceiling: what they can cost, before anything is measured.
    expect(quote.outcome === "admitted" && pilotReason).toMatchObject({ atMost: quote.outcome === "admitted" ? quote.price : -1 });
    expect(describeDecisionReason(pilotReason!)).toMatch(/^provisional: priced after 3 pilot tasks, at most 0\.\d+ credits/);
  });

  it("runs its pilots, then admits the rest planned from their measured time, and the books balance", async () => {
    const { jobId, decision } = await consumer.jobs.submit.mutate(withoutEstimate("pilots", 6, 100));
    expect(decision).toMatchObject({ outcome: "admitted", provisional: true, pilots: 3 });
    const db = market.manager.services.db;
    const submitted = await db.job.findUniqueOrThrow({ where: { id: jobId } });
    expect(submitted).toMatchObject({ workEstimate: "provisional", pilotCount: 3, workPerTask: 10 });
    const view = await consumer.jobs.get.query({ jobId });
    expect(view.workEstimate).toMatchObject({ kind: "provisional", pilots: 3 });
    expect(await cliStatus(jobId)).toContain("Work per task: provisional (3 pilot tasks run first");
    // Running it again from its job file runs pilots again: the file gives no estimate either.
    expect("workPerTask" in (await consumer.jobs.jobFile.query({ jobId }))).toBe(false);

    // Only the pilots are handed out: 2 then 1, each measured at 0.5 s on the 0.65 machine.
    const pilots = [...(await runLeased(500)), ...(await runLeased(500))];
    expect(pilots.sort()).toEqual([0, 1, 2]);

    // The market's tick puts the rest to the engine once the pilots are done.
    const measured = await until(() => db.job.findUniqueOrThrow({ where: { id: jobId } }), (j) => j.workEstimate === "measured");
    expect(measured.workEstimate).toBe("measured");
    expect(measured.workPerTask).toBeCloseTo(0.5 * SPEED);
    expect(codes(measured.decision)).toContain("planned-from-pilots");
    expect(measured.quotedPriceMicro! > submitted.quotedPriceMicro!).toBe(true);
    expect((await consumer.jobs.get.query({ jobId })).workEstimate).toMatchObject({ kind: "measured", pilots: 3, workPerTask: measured.workPerTask });
    expect(await cliStatus(jobId)).toContain(`Work per task: ${Number(measured.workPerTask.toFixed(6))} s of reference CPU, measured by 3 pilot tasks.`);

    const rest = [...(await runLeased(500)), ...(await runLeased(500))];
    expect(rest.sort()).toEqual([3, 4, 5]);
    const done = await db.job.findUniqueOrThrow({ where: { id: jobId } });
    expect(done.status).toBe("completed");
    // Charged the two posted prices, never more than the benefit; both escrows emptied by settlement.
    expect(done.chargedMicro).toBe(done.quotedPriceMicro);
    await expectMarketInvariants(db, [jobId]);
  });

  it("keeps a job between its pilots and the rest across a restart, and admits the rest afterwards", async () => {
    const { jobId } = await consumer.jobs.submit.mutate(withoutEstimate("restarted", 5, 100));
    await runLeased(400);
    // The last pilot finishes while its machine is paused: the engine has nowhere to put the rest.
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 2 });
    expect(leases).toHaveLength(1);
    await setPaused(true);
    await new Promise((r) => setTimeout(r, 400));
    await report(leases[0]!, 400);
    const db = () => market.manager.services.db;
    const waiting = await until(() => db().job.findUniqueOrThrow({ where: { id: jobId } }), (j) => codes(j.decision).includes("planned-from-pilots"));
    expect(waiting).toMatchObject({ workEstimate: "provisional", tasksDone: 3, decision: { outcome: "delayed", provisional: true } });

    await market.restart();
    const live = market.manager.services.market.state;
    expect(live.jobs.get(jobId)?.pilots).toMatchObject({ count: 3, phase: "provisional" });
    // Only the pilots came back to the live market: the rest is not placed before the engine admits it.
    expect([...live.tasks.values()].filter((t) => t.jobId === jobId).map((t) => t.index).sort()).toEqual([0, 1, 2]);

    await setPaused(false);
    const measured = await until(() => db().job.findUniqueOrThrow({ where: { id: jobId } }), (j) => j.workEstimate === "measured");
    expect(measured.workPerTask).toBeCloseTo(0.4 * SPEED);
    expect([...(await runLeased(400))].sort()).toEqual([3, 4]);
    expect((await db().job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe("completed");
    await expectMarketInvariants(db(), [jobId]);
  });

  it("a delayed job without an estimate is admitted later as its pilots alone, its rest still held back", async () => {
    await setPaused(true);
    const { jobId, decision } = await consumer.jobs.submit.mutate(withoutEstimate("delayed", 4, 100));
    expect(decision).toMatchObject({ outcome: "delayed", provisional: true, pilots: 3 });
    await setPaused(false);
    const db = market.manager.services.db;
    const admitted = await until(() => db.job.findUniqueOrThrow({ where: { id: jobId } }), (j) => j.status === "admitted");
    expect(admitted).toMatchObject({ status: "admitted", workEstimate: "provisional", decision: { provisional: true, pilots: 3 } });
    expect(admitted.pilotPriceMicro).toBe(admitted.quotedPriceMicro);
    expect([...(await runLeased(300)), ...(await runLeased(300))].sort()).toEqual([0, 1, 2]);
    await until(() => db.job.findUniqueOrThrow({ where: { id: jobId } }), (j) => j.workEstimate === "measured");
    expect(await runLeased(300)).toEqual([3]);
    await expectMarketInvariants(db, [jobId]);
  });

  it("settles the pilots alone when the engine does not admit the rest planned from what they measured", async () => {
    const db = market.manager.services.db;
    // A market that waits for no job: what the engine does not admit at once it rejects.
    const live = market.manager.services.market;
    live.settings.maxDelayMs = 1;
    await applySettings(live, live.adminSettings);
    const { jobId, decision } = await consumer.jobs.submit.mutate(withoutEstimate("too big", 13, 1.5));
    expect(decision.outcome).toBe("admitted");
    await runLeased(300);
    // The last pilot finishes while the only machine is paused: the rest cannot be placed, and the
    // market waits for no job.
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 2 });
    await setPaused(true);
    for (const lease of leases) await report(lease, 5);
    const ended = await until(() => db.job.findUniqueOrThrow({ where: { id: jobId }, include: { tasks: true } }), (j) => j.status === "rejected");
    expect(ended.status).toBe("rejected");
    expect(codes(ended.decision)).toContain("planned-from-pilots");
    expect(ended.result).toMatchObject({ error: { code: "remainder-rejected", pilots: 3, tasks: 13 } });
    // The consumer is told why in the engine's words: the market's maximum wait, after the pilots.
    expect(codes(ended.decision)).toContain("max-wait-exceeded");
    expect(await cliStatus(jobId)).toContain("only its 3 pilot tasks ran: the rest was not admitted");
    // Only the pilots stay, and the consumer paid what their producers were paid.
    expect(ended.tasks.map((t) => t.index).sort()).toEqual([0, 1, 2]);
    const paid = await db.ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { jobId, kind: "payment" }, account: { kind: "producer" } } });
    expect(ended.chargedMicro).toBe(paid._sum.amountMicro);
    expect(ended.chargedMicro!).toBeGreaterThan(0n);
    await setPaused(false);
    const escrow = await db.ledgerAccount.findFirst({ where: { kind: "escrow", jobId } });
    expect(escrow?.balanceMicro).toBe(0n);
    await expectLedgerBalances(db);
  });
});

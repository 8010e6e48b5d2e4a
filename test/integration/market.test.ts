import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { moduleImporting } from "../support/wasm.ts";
import { applySettings } from "../../apps/market-manager/src/market/settings.ts";

// The live market's rules through the API: admin settings with who changed them, delayed jobs
// admitted when capacity arrives, cancellation and what it costs.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
let admin: Client;
let consumer: Client;
let worker: ReturnType<TestMarket["tokenClient"]>;

beforeAll(async () => {
  market = await startTestMarket();
  const { email, password } = market.manager.admin!;
  admin = await market.signIn(email, password);
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  const producer = await market.signUp("seller@example.test", ["producer"]);
  worker = market.tokenClient((await producer.account.tokens.create.mutate({ name: "rack" })).token);
});
afterAll(() => market?.stop());

const machine = { name: "m", kind: "opportunistic" as const, slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test" };
const monteCarlo = (tasks: number, value = 50) => ({
  name: "pi",
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 100_000 }, taskCount: tasks },
  benefit: { kind: "constant" as const, value },
});

describe("admin settings", () => {
  it("only an admin may change them, and each change records who made it", async () => {
    expect((await refusal(consumer.admin.settings.set.mutate({ priceConstant: 5 }))).code).toBe("trpc:FORBIDDEN");
    expect((await refusal(admin.admin.settings.set.mutate({ policy: "no-such-policy" } as never))).code).toBe("invalid-input");
    expect((await refusal(admin.admin.settings.set.mutate({ leaseTimeoutMs: 10 }))).code).toBe("invalid-input");

    const next = await admin.admin.settings.set.mutate({ priceConstant: 5, leaseTimeoutMs: 20_000, policy: "e-pvm" });
    expect(next).toMatchObject({ priceConstant: 5, leaseTimeoutMs: 20_000, policy: "e-pvm" });
    expect(market.manager.services.market.settings.leaseTimeoutMs).toBe(20_000);
    const { current, changes } = await admin.admin.settings.get.query();
    expect(current.policy).toBe("e-pvm");
    expect(changes.map((c) => [c.key, c.to, c.by]).sort()).toEqual([
      ["leaseTimeoutMs", 20_000, market.manager.admin!.email],
      ["policy", "e-pvm", market.manager.admin!.email],
      ["priceConstant", 5, market.manager.admin!.email],
    ]);
    await admin.admin.settings.set.mutate({ priceConstant: 1, policy: "miserly" });
  });
});

describe("admission and cancellation", () => {
  it("delays a job while the market has no machine, and admits it when one arrives", async () => {
    const { jobId, decision } = await consumer.jobs.submit.mutate(monteCarlo(2));
    expect(decision.outcome).toBe("delayed");
    expect(decision.reasons.length).toBeGreaterThan(0);
    const { machineId } = await worker.worker.register.mutate(machine);
    await expect.poll(async () => (await consumer.jobs.get.query({ jobId })).status, { timeout: 10_000 }).toBe("admitted");
    // Leave the machine's queue empty for the next test.
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 2 });
    expect(leases).toHaveLength(2);
    await consumer.jobs.cancel.mutate({ jobId });
    await worker.worker.depart.mutate({ machineId });
  });

  it("plans a delayed job's input transfer when it admits it later, as it would have at once", async () => {
    // One task with 1 MB of stdin and a tenth of a second of work: at the link the market assumes
    // for every machine (1 MB/s) the transfer is a second of the planned finish, whether the job is
    // admitted at once or, as here, when a machine joins.
    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "big input",
      source: { kind: "upload", moduleBase64: Buffer.from(moduleImporting("wasi_snapshot_preview1", "fd_write")).toString("base64"), tasks: [{ stdin: "x".repeat(1_000_000) }], workPerTask: 0.1 },
      benefit: { kind: "constant", value: 100 },
    });
    expect(decision.outcome).toBe("delayed");
    const joined = Date.now();
    const { machineId } = await worker.worker.register.mutate(machine);
    // Whatever the outcome, the job and the machine go, or the next tests would find them.
    try {
      await expect.poll(async () => (await consumer.jobs.get.query({ jobId })).status, { timeout: 10_000 }).toBe("admitted");
      const { expectedCompletionAt } = await consumer.jobs.get.query({ jobId });
      // Without the transfer the plan would end a tenth of a second after admission. The margin
      // allows for the admission pass having read its clock just before the machine joined.
      expect(expectedCompletionAt! - joined).toBeGreaterThan(800);
    } finally {
      await consumer.jobs.cancel.mutate({ jobId });
      await worker.worker.depart.mutate({ machineId });
    }
  });

  it("gives up on a delayed job once it has waited the engine's maximum, with the engine's reason", async () => {
    // The engine's max-wait rule, shortened from 10 minutes for this test: nothing in the service counts the wait.
    const live = market.manager.services.market;
    const maxDelayMs = live.settings.maxDelayMs;
    live.settings.maxDelayMs = 1500;
    await applySettings(live, live.adminSettings);
    try {
      const { jobId, decision } = await consumer.jobs.submit.mutate(monteCarlo(2));
      expect(decision.outcome).toBe("delayed");
      await expect.poll(async () => (await consumer.jobs.get.query({ jobId })).status, { timeout: 10_000 }).toBe("rejected");
      const job = await consumer.jobs.get.query({ jobId });
      expect((job.decision as { reasons: unknown[] }).reasons).toContainEqual(expect.objectContaining({ code: "max-wait-exceeded", maxDelaySeconds: 1.5 }));
      expect(job.escrowHeld).toBe(0);
    } finally {
      live.settings.maxDelayMs = maxDelayMs;
      await applySettings(live, live.adminSettings);
    }
  });

  it("cancelling charges the quote's share of the tasks done, at least what producers were paid, and refunds the rest", async () => {
    const before = (await consumer.ledger.statement.query()).consumerBalance;
    const { machineId } = await worker.worker.register.mutate(machine);
    const { jobId, decision } = await consumer.jobs.submit.mutate(monteCarlo(3, 40));
    expect(decision.outcome).toBe("admitted");
    const escrow = (await consumer.jobs.get.query({ jobId })).escrowHeld;
    expect(escrow).toBeCloseTo(decision.outcome === "admitted" ? decision.price : NaN, 6); // what it can be charged: its price
    expect((await consumer.ledger.statement.query()).consumerBalance).toBeCloseTo(before - escrow, 6);

    const { leases } = await worker.worker.lease.mutate({ machineId, max: 2 });
    const [first, second] = leases;
    const empty = Buffer.alloc(0).toString("base64");
    const stdout = Buffer.from("7 10\n");
    const hash = (await import("node:crypto")).createHash("sha256").update(stdout).digest("hex");
    // One run, reported as taking 2 s: the producer earns its lease's piece rate, whatever it says.
    await worker.worker.report.mutate({ machineId, leaseId: first!.leaseId, exitCode: 0, stdout: stdout.toString("base64"), stderr: empty, outputHash: hash, elapsedMs: 2000 });
    const piece = Number(first!.pieceRateMicro) / 1e6;
    expect(piece).toBeGreaterThan(0);

    const { charged } = await consumer.jobs.cancel.mutate({ jobId });
    // One task of three done: a third of the quote, its congestion and fee with it.
    const price = decision.outcome === "admitted" ? decision.price : NaN;
    expect(charged).toBeCloseTo(Math.max(piece, price / 3), 6);
    expect(charged).toBeGreaterThan(piece);
    expect((await consumer.ledger.statement.query()).consumerBalance).toBeCloseTo(before - charged, 6);
    const cancelled = await consumer.jobs.get.query({ jobId });
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.chargeReasons).toContainEqual(expect.objectContaining({ code: "charged-share", tasks: 3, done: 1 }));
    // The other lease is no longer current, and the job cannot be cancelled twice.
    expect((await refusal(worker.worker.report.mutate({ machineId, leaseId: second!.leaseId, exitCode: 0, stdout: stdout.toString("base64"), stderr: empty, outputHash: hash, elapsedMs: 5 }))).code).toBe("stale-lease");
    expect((await refusal(consumer.jobs.cancel.mutate({ jobId }))).code).toBe("job-finished");
    const db = market.manager.services.db;
    expect(await db.ledgerEntry.count({ where: { jobId, kind: "settlement" } })).toBe(1);
    expect((await db.ledgerAccount.aggregate({ _sum: { balanceMicro: true } }))._sum.balanceMicro).toBe(0n);
  });

  it("a cancel raced by a second cancel and by its running tasks' reports settles once, charging for the reports that got in", async () => {
    const before = (await consumer.ledger.statement.query()).consumerBalance;
    const { machineId } = await worker.worker.register.mutate(machine);
    const { jobId, decision } = await consumer.jobs.submit.mutate(monteCarlo(3, 40));
    expect(decision.outcome).toBe("admitted");
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 2 });
    expect(leases).toHaveLength(2);
    const stdout = Buffer.from("7 10\n");
    const hash = (await import("node:crypto")).createHash("sha256").update(stdout).digest("hex");
    const report = (leaseId: string) =>
      worker.worker.report.mutate({ machineId, leaseId, exitCode: 0, stdout: stdout.toString("base64"), stderr: "", outputHash: hash, elapsedMs: 2000 }).then(
        () => "paid",
        (e: unknown) => String((e as { data?: { reason?: { code?: string } } }).data?.reason?.code),
      );
    // The cancellation's transaction runs outside the market's lock: whichever order these land
    // in, a report is either in before the job leaves the market (and charged) or refused as stale.
    const first = consumer.jobs.cancel.mutate({ jobId }).catch((e: unknown) => e);
    const [a, b, ...reports] = await Promise.all([
      first,
      consumer.jobs.cancel.mutate({ jobId }).catch((e: unknown) => e),
      // One report sent with the cancels, one once a cancel was answered (stale by then).
      report(leases[0]!.leaseId),
      first.then(() => report(leases[1]!.leaseId)),
    ]);
    expect(reports[1]).toBe("stale-lease");
    const answers = [a, b].filter((x): x is { cancelled: true; charged: number } => typeof x === "object" && x !== null && "charged" in x);
    expect(answers.length).toBeGreaterThanOrEqual(1);
    for (const e of [a, b].filter((x) => !answers.includes(x as never))) expect((await refusal(Promise.reject(e))).code).toBe("job-finished");
    for (const r of reports) expect(["paid", "stale-lease"]).toContain(r);
    const done = reports.filter((r) => r === "paid").length;
    // Each task done is charged its piece (2 s at 0.5 credits per second) or a third of the quote, the more.
    const charge = Math.max(done, decision.outcome === "admitted" ? (decision.price * done) / 3 : NaN);
    for (const answer of answers) expect(answer.charged).toBeCloseTo(charge, 6);
    expect((await consumer.ledger.statement.query()).consumerBalance).toBeCloseTo(before - charge, 6);
    const db = market.manager.services.db;
    await expect.poll(() => db.task.count({ where: { jobId, status: { in: ["pending", "queued", "leased"] } } })).toBe(0);
    expect(await db.lease.count({ where: { task: { jobId }, status: "active" } })).toBe(0);
    expect((await consumer.jobs.get.query({ jobId })).status).toBe("cancelled");
    expect(await db.ledgerEntry.count({ where: { jobId, kind: "settlement" } })).toBe(1);
    expect((await db.ledgerAccount.aggregate({ _sum: { balanceMicro: true } }))._sum.balanceMicro).toBe(0n);
    await worker.worker.depart.mutate({ machineId });
  });
});

describe("machines' offers", () => {
  const dedicated = (contractPrice: number, departsAt: number) => ({ ...machine, name: `d-${contractPrice}`, kind: "dedicated" as const, slots: 4, contractPrice, departsAt });

  it("buys a dedicated machine's time at a fair price and pays nothing for acceptance or heartbeats alone", async () => {
    const producer = await market.signUp("lessor@example.test", ["producer"]);
    const lessor = market.tokenClient((await producer.account.tokens.create.mutate({ name: "rack" })).token);
    const { machineId, offer } = await lessor.worker.register.mutate(dedicated(0.01, Date.now() + 60_000));
    expect(offer?.[0]?.code).toBe("offer-accepted");
    const row = await market.manager.services.db.machine.findUniqueOrThrow({ where: { id: machineId } });
    expect(row.kind).toBe("dedicated");
    expect((await producer.ledger.statement.query()).producerBalance).toBe(0); // nothing on acceptance
    await new Promise((r) => setTimeout(r, 1500));
    await lessor.worker.heartbeat.mutate({ machineId, leaseIds: [] });
    await lessor.worker.depart.mutate({ machineId });
    // Heard for 1.5 s but it proved nothing (no lease, no probe answered): the contract pays only
    // for proven time (test/security/dedicated-contracts.test.ts pays a machine that proves it).
    expect((await producer.ledger.statement.query()).producerBalance).toBe(0);
  });

  it("refuses a dedicated offer priced far above what its capacity is worth, storing nothing", async () => {
    const before = await market.manager.services.db.machine.count();
    const reason = await refusal(worker.worker.register.mutate(dedicated(1e9, Date.now() + 60_000)));
    expect(reason).toMatchObject({ code: "offer-refused", refusal: { code: "offer-too-expensive", contractPrice: 1e9 } });
    expect(await market.manager.services.db.machine.count()).toBe(before);
  });

  it("refuses a dedicated offer that ends in the past, and negative prices", async () => {
    expect((await refusal(worker.worker.register.mutate(dedicated(1, Date.now() - 1000)))).code).toBe("offer-in-the-past");
    expect((await refusal(worker.worker.register.mutate({ ...machine, pricePerSecond: -1 }))).code).toBe("invalid-input");
  });
});

describe("rebalancing", () => {
  it("moves queued work to a machine that joins idle, before anyone leases it", async () => {
    const owner = await market.signUp("fleet@example.test", ["producer"]);
    const fleet = market.tokenClient((await owner.account.tokens.create.mutate({ name: "fleet" })).token);
    const first = await fleet.worker.register.mutate({ ...machine, name: "busy", pricePerSecond: 0 });
    const { jobId, decision } = await consumer.jobs.submit.mutate({ ...monteCarlo(8, 30), source: { ...monteCarlo(8).source, params: { samplesPerTask: 50_000_000 } } });
    expect(decision.outcome).toBe("admitted");
    const queuedOn = async (name: string) => (await admin.admin.overview.query()).machines.find((m) => m.name === name && m.status === "active")?.queued ?? 0;
    expect(await queuedOn("busy")).toBe(8);
    await fleet.worker.register.mutate({ ...machine, name: "idle", pricePerSecond: 0 });
    await expect.poll(() => queuedOn("idle"), { timeout: 10_000 }).toBeGreaterThan(0);
    expect((await queuedOn("busy")) + (await queuedOn("idle"))).toBe(8);
    await consumer.jobs.cancel.mutate({ jobId });
    await fleet.worker.depart.mutate({ machineId: first.machineId });
  });
});

describe("machines joining", () => {
  it("a machine that joins while no task waits for one does not hold the market's next decision behind the statements being written", async () => {
    const live = market.manager.services.market;
    const owner = await market.signUp("joiner@example.test", ["producer"]);
    const joiner = market.tokenClient((await owner.account.tokens.create.mutate({ name: "joiner" })).token);
    expect(live.state.hasPendingTasks()).toBe(false);
    // A statement of the journal still being written (a group of reports, say).
    let release!: () => void;
    const written = new Promise<void>((resolve) => (release = resolve));
    live.journal.add({ kind: "reports", write: () => written, applied: () => {}, failed: () => {} });
    try {
      const { machineId } = await joiner.worker.register.mutate({ ...machine, name: "joining" });
      // The next report, lease or admission is decided from memory at once, not after the
      // statement: placing waiting tasks (there are none) would have been a step that waits for it.
      const decided = await Promise.race([live.pipelined(() => "decided"), new Promise((resolve) => setTimeout(() => resolve("waited"), 2_000))]);
      expect(decided).toBe("decided");
      release();
      await joiner.worker.depart.mutate({ machineId });
    } finally {
      release();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { LOOP_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { PUBLIC_URL, clientFor, refusal, startTestMarket, verifyEmail, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";

// No one can create money. Each test is an attack that minted credits before: a producer's
// self-reported run time, a consumer's negative penalty, a dedicated contract paid up front, one
// owner's replicas, unpaid failed runs and farmed sign-ups. Each runs against a real market over
// the documented protocol, and checks what the attacker ends up with and that the market's own
// account never goes below minus its reserve.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
type Worker = ReturnType<TestMarket["tokenClient"]>;
const RESERVE = 100_000;

beforeAll(async () => {
  market = await startTestMarket({ MARKET_RESERVE: String(RESERVE) });
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;
const marketBalance = async () => Number((await db().ledgerAccount.findFirst({ where: { kind: "market" } }))?.balanceMicro ?? 0n) / 1e6;
const machine = { kind: "opportunistic" as const, slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, userAgent: "test" };

async function producer(email: string): Promise<{ client: Client; worker: Worker }> {
  const client = await market.signUp(email, ["producer", "consumer"]);
  const worker = market.tokenClient((await client.account.tokens.create.mutate({ name: "rack" })).token);
  return { client, worker };
}

function forged(text: string) {
  const stdout = Buffer.from(text);
  return { stdout: stdout.toString("base64"), stderr: "", outputHash: createHash("sha256").update(stdout).digest("hex") };
}

const pi = (value: number, taskCount = 1, replicas = 1) => ({
  name: "pi",
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 1000 }, taskCount },
  benefit: { kind: "constant" as const, value },
  replicas,
});

async function expectBooksSound() {
  await expectLedgerBalances(db());
  expect(await marketBalance()).toBeGreaterThanOrEqual(-RESERVE);
  const negative = await db().ledgerAccount.count({ where: { kind: { not: "market" }, balanceMicro: { lt: 0n } } });
  expect(negative).toBe(0);
}

describe("a producer's reported run time", () => {
  it("is paid only up to what the machine's benchmark allows, flagged, and never past the job's escrow", async () => {
    const consumer = await market.signUp("buyer1@example.test", ["consumer"]);
    const { client, worker } = await producer("greedy@example.test");
    const { machineId } = await worker.worker.register.mutate({ ...machine, name: "greedy", pricePerSecond: 1 });
    const { jobId, decision } = await consumer.jobs.submit.mutate(pi(50));
    expect(decision.outcome).toBe("admitted");
    const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
    // 24.9 days for a task of a few milliseconds.
    await worker.worker.report.mutate({ machineId, leaseId: lease!.leaseId, exitCode: 0, elapsedMs: 2_147_483_000, ...forged("3.14 1000\n") });

    const paid = (await client.ledger.statement.query()).producerBalance;
    expect(paid).toBeGreaterThan(0);
    expect(paid).toBeLessThanOrEqual(market.manager.services.market.settings.terms.payFloorSeconds * 1);
    const result = await db().result.findFirstOrThrow({ where: { task: { jobId } } });
    expect(result.implausible).toBe(true);
    expect((await db().machine.findUniqueOrThrow({ where: { id: machineId } })).reputation).toBeLessThan(1);
    await worker.worker.depart.mutate({ machineId });
    await expectBooksSound();
  });

  it("at a million credits a second takes at most the consumer's escrow, and the market pays nothing", async () => {
    const consumer = await market.signUp("buyer2@example.test", ["consumer"]);
    const honest = await producer("cheap@example.test");
    const { machineId: cheap } = await honest.worker.worker.register.mutate({ ...machine, name: "cheap", pricePerSecond: 0 });
    const { jobId } = await consumer.jobs.submit.mutate(pi(20));
    const { client, worker } = await producer("dear@example.test");
    const { machineId } = await worker.worker.register.mutate({ ...machine, name: "dear", pricePerSecond: 1_000_000 });
    // The dear machine may not take the cheap one's queued work: it costs more per unit of work.
    expect((await worker.worker.lease.mutate({ machineId, max: 1 })).leases).toHaveLength(0);
    await honest.worker.worker.depart.mutate({ machineId: cheap });
    // With the cheap machine gone the task is the dear machine's: it is paid, but never past the escrow.
    const before = await marketBalance();
    const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
    expect(lease?.jobId).toBe(jobId);
    await worker.worker.report.mutate({ machineId, leaseId: lease!.leaseId, exitCode: 0, elapsedMs: 2_147_483_000, ...forged("3.14 1000\n") });
    expect((await client.ledger.statement.query()).producerBalance).toBeLessThanOrEqual(20);
    expect(await marketBalance()).toBeGreaterThanOrEqual(before);
    expect((await consumer.ledger.statement.query()).consumerBalance).toBeGreaterThanOrEqual(1000 - 20);
    await worker.worker.depart.mutate({ machineId });
    await expectBooksSound();
  });
});

describe("a lateness penalty", () => {
  const late = (penalty: number) => ({
    name: "late",
    source: { kind: "upload" as const, moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: [{ args: [], stdin: "" }], workPerTask: 0.01, memoryMbPerTask: 16 },
    benefit: { kind: "deadline" as const, value: 1, deadline: 1, penalty },
  });

  async function runLate(consumer: Client, elapsedMs: number) {
    const { worker } = await producer(`p-${elapsedMs}@example.test`);
    const { machineId } = await worker.worker.register.mutate({ ...machine, name: "p", pricePerSecond: 0 });
    const { jobId, decision } = await consumer.jobs.submit.mutate(late(-1_000_000_000_000));
    expect(decision.outcome).toBe("admitted");
    const price = decision.outcome === "admitted" ? decision.price : NaN;
    expect(decision.terms).toMatchObject({ failedRunsCharged: true, penaltyCap: price });
    const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
    await new Promise((r) => setTimeout(r, 1300)); // past the 1 s deadline
    await worker.worker.report.mutate({ machineId, leaseId: lease!.leaseId, exitCode: 0, elapsedMs, ...forged("") });
    await worker.worker.depart.mutate({ machineId });
    return { jobId, price };
  }

  it("is paid by the market only up to the job's price", async () => {
    const consumer = await market.signUp("late1@example.test", ["consumer"]);
    const { jobId, price } = await runLate(consumer, 5);
    expect((await consumer.jobs.get.query({ jobId })).status).toBe("completed");
    // 1,000 credits to start; late, so charged nothing and compensated the price, not a trillion.
    expect(price).toBeGreaterThan(0);
    expect((await consumer.ledger.statement.query()).consumerBalance).toBeCloseTo(1000 + price, 5);
    await expectBooksSound();
  });

  it("is void when the measured work contradicts the consumer's estimate", async () => {
    const consumer = await market.signUp("late2@example.test", ["consumer"]);
    await runLate(consumer, 40_000); // 40 s of CPU declared as 0.01 s
    expect((await consumer.ledger.statement.query()).consumerBalance).toBeLessThanOrEqual(1000);
    await expectBooksSound();
  });
});

describe("dedicated contracts", () => {
  const offer = (slots: number, days: number, contractPrice: number) => ({
    ...machine,
    name: "lease",
    kind: "dedicated" as const,
    slots,
    pricePerSecond: 0,
    departsAt: Date.now() + days * 86_400_000,
    contractPrice,
  });

  it("are paid as the capacity is delivered: register, depart at once, and almost nothing is paid", async () => {
    const { client, worker } = await producer("lessor@example.test");
    let total = 0;
    for (let i = 0; i < 5; i++) {
      const r = await worker.worker.register.mutate(offer(4, 1, 0.5));
      await worker.worker.depart.mutate({ machineId: r.machineId });
      total = (await client.ledger.statement.query()).producerBalance;
    }
    expect(total).toBeLessThan(0.001);
    await expectBooksSound();
  });

  it("that the market could not honour from its reserve are refused with a reason, and absurd ones get a clear error", async () => {
    const { worker } = await producer("big@example.test");
    const reason = await refusal(worker.worker.register.mutate(offer(256, 30, 1_000_000_000)));
    expect(reason).toMatchObject({ code: "offer-refused" });
    expect(["offer-unaffordable", "offer-too-expensive"]).toContain(reason.why);
    const tooBig = await refusal(worker.worker.register.mutate(offer(256, 30, 1e13)));
    expect(tooBig.code).toBe("invalid-input");
    expect(String(tooBig.message)).toMatch(/at most 1000000000 credits/);
    expect((await refusal(worker.worker.register.mutate(offer(4, 365, 1)))).code).toBe("offer-too-long");
  });
});

describe("replicas", () => {
  it("cannot be verified by one owner: a job waits for enough owners, and one owner's machines run only one copy", async () => {
    const consumer = await market.signUp("verify@example.test", ["consumer"]);
    const sybil = await producer("sybil@example.test");
    const honest = await producer("honest@example.test");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await sybil.worker.worker.register.mutate({ ...machine, name: `sybil-${i}`, pricePerSecond: 0 })).machineId);
    const { machineId: honestId } = await honest.worker.worker.register.mutate({ ...machine, name: "honest", pricePerSecond: 0 });
    try {
      // Four machines but two owners: three copies that verify each other cannot be placed.
      const three = await consumer.jobs.submit.mutate(pi(30, 1, 3));
      expect(three.decision.outcome).toBe("delayed");
      expect(three.decision.reasons).toContainEqual(expect.objectContaining({ code: "needs-more-machines", replicas: 3, ownersConnected: 2 }));
      await consumer.jobs.cancel.mutate({ jobId: three.jobId });

      const { jobId, decision } = await consumer.jobs.submit.mutate(pi(30, 1, 2));
      expect(decision.outcome).toBe("admitted");
      const leaseAll = async () => {
        let ran = 0;
        for (const machineId of ids) {
          for (const lease of (await sybil.worker.worker.lease.mutate({ machineId, max: 1 })).leases) {
            ran += 1;
            await sybil.worker.worker.report.mutate({ machineId, leaseId: lease.leaseId, exitCode: 0, elapsedMs: 10, ...forged("FORGED RESULT") });
          }
        }
        return ran;
      };
      expect(await leaseAll()).toBe(1);
      // The honest machine leaves without running its copy: it goes back, and still no machine of the sybil's may take it.
      await honest.worker.worker.depart.mutate({ machineId: honestId });
      expect(await leaseAll()).toBe(0);
      const job = await consumer.jobs.get.query({ jobId });
      expect(job.status).not.toBe("completed");
      expect(job.charged).toBeNull();
      expect(await db().result.count({ where: { task: { jobId }, accepted: true } })).toBe(0);
      expect(job.waiting.reasons[0]).toMatchObject({ code: "needs-another-machine", ownersConnected: 1 });
      await consumer.jobs.cancel.mutate({ jobId });
    } finally {
      for (const machineId of ids) await sybil.worker.worker.depart.mutate({ machineId });
      await honest.worker.worker.depart.mutate({ machineId: honestId }).catch(() => {});
    }
    await expectBooksSound();
  });

  it("reach a quorum of independent owners, and the consumer sees how many agreed", async () => {
    const consumer = await market.signUp("verify2@example.test", ["consumer"]);
    const owners = [await producer("o1@example.test"), await producer("o2@example.test")];
    const ids = [];
    for (const o of owners) ids.push((await o.worker.worker.register.mutate({ ...machine, name: "o", pricePerSecond: 0 })).machineId);
    const { jobId } = await consumer.jobs.submit.mutate(pi(30, 1, 2));
    for (const [i, o] of owners.entries()) {
      const [lease] = (await o.worker.worker.lease.mutate({ machineId: ids[i]!, max: 1 })).leases;
      await o.worker.worker.report.mutate({ machineId: ids[i]!, leaseId: lease!.leaseId, exitCode: 0, elapsedMs: 10, ...forged("3.14 1000\n") });
    }
    const job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    expect(job.verification).toMatchObject({ replicas: 2, tasksVerified: 1, fewestOwnersAgreeing: 2 });
    for (const [i, o] of owners.entries()) await o.worker.worker.depart.mutate({ machineId: ids[i]! });
    await expectBooksSound();
  });
});

describe("a job whose escrow is more than the consumer's balance", () => {
  it("is refused naming both amounts, leaves no job and charges nothing", async () => {
    const consumer = await market.signUp("short-of-credits@example.test", ["consumer"]);
    const { worker } = await producer("pricey-rack@example.test");
    const { machineId } = await worker.worker.register.mutate({ ...machine, name: "dear", pricePerSecond: 100 });
    const before = (await consumer.ledger.statement.query()).consumerBalance;
    const escrowsBefore = await db().ledgerEntry.count({ where: { kind: "escrow" } });
    const dear = {
      name: "dear",
      source: { kind: "upload" as const, moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: [{ args: [], stdin: "" }], workPerTask: 5, memoryMbPerTask: 16 },
      benefit: { kind: "constant" as const, value: 50_000 },
    };
    const priceOf = (q: Awaited<ReturnType<typeof consumer.jobs.quote.mutate>>) => (q.outcome === "admitted" ? q.price : null);
    const quoted = priceOf(await consumer.jobs.quote.mutate(dear));
    expect(quoted).toBeGreaterThan(0);
    const refused = await refusal(consumer.jobs.submit.mutate(dear));
    expect(refused).toMatchObject({ code: "insufficient-credits", balance: before });
    // The engine counted the job's load while its statement was written, and forgot it when the
    // statement was refused: the same job is priced as before.
    expect(priceOf(await consumer.jobs.quote.mutate(dear))).toBe(quoted);
    expect(refused.needed as number).toBeGreaterThan(before);
    expect(refused.message).toMatch(/credits in escrow/);
    expect(await consumer.jobs.list.query()).toEqual([]);
    expect(await db().job.count({ where: { name: "dear" } })).toBe(0);
    expect(await db().ledgerEntry.count({ where: { kind: "escrow" } })).toBe(escrowsBefore);
    expect((await consumer.ledger.statement.query()).consumerBalance).toBe(before);

    await worker.worker.depart.mutate({ machineId });
    await expectBooksSound();
  });

  it("is rejected when it waited delayed and the admission it gets later costs more than the balance, charging nothing", async () => {
    const consumer = await market.signUp("short-later@example.test", ["consumer"]);
    const before = (await consumer.ledger.statement.query()).consumerBalance;
    const escrowsBefore = await db().ledgerEntry.count({ where: { kind: "escrow" } });
    // 4 GB a task: no machine in the market can hold it yet, so the job waits.
    const big = {
      name: "big",
      source: { kind: "upload" as const, moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: [{ args: [], stdin: "" }], workPerTask: 5, memoryMbPerTask: 4096 },
      benefit: { kind: "constant" as const, value: 50_000 },
    };
    const { jobId, decision } = await consumer.jobs.submit.mutate(big);
    expect(decision.outcome).toBe("delayed");
    const { worker } = await producer("big-dear-rack@example.test");
    const { machineId } = await worker.worker.register.mutate({ ...machine, name: "big-dear", memoryPerSlotMb: 8192, pricePerSecond: 100 });
    await expect.poll(async () => (await consumer.jobs.get.query({ jobId })).status, { timeout: 10_000 }).toBe("rejected");
    const job = await consumer.jobs.get.query({ jobId });
    const short = (job.decision as { reasons: { code: string; needed?: number }[] }).reasons.find((r) => r.code === "insufficient-credits");
    expect(short?.needed).toBeGreaterThan(before);
    expect(job.escrowHeld).toBe(0);
    expect(await db().task.count({ where: { jobId } })).toBe(0);
    expect(await db().ledgerEntry.count({ where: { kind: "escrow" } })).toBe(escrowsBefore);
    expect((await consumer.ledger.statement.query()).consumerBalance).toBe(before);

    await worker.worker.depart.mutate({ machineId });
    await expectBooksSound();
  });
});

describe("failed runs", () => {
  it("are paid to the producer and charged to the consumer, and a job whose tasks keep failing stops", async () => {
    const consumer = await market.signUp("looper@example.test", ["consumer"]);
    const { client, worker } = await producer("patient@example.test");
    const { machineId } = await worker.worker.register.mutate({ ...machine, name: "patient", pricePerSecond: 1 });
    const { jobId } = await consumer.jobs.submit.mutate({
      name: "forever",
      source: { kind: "upload", moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: [{ args: [], stdin: "" }], workPerTask: 1, memoryMbPerTask: 16 },
      benefit: { kind: "constant", value: 30 },
    });
    for (let attempt = 0; attempt < 3; attempt++) {
      const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
      expect(lease).toBeDefined();
      await worker.worker.report.mutate({ machineId, leaseId: lease!.leaseId, exitCode: -1, elapsedMs: 3000, error: { code: "timeout", message: "ran past its wall-time limit" }, ...forged("") });
    }
    const job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("failed");
    const earned = (await client.ledger.statement.query()).producerBalance;
    expect(earned).toBeCloseTo(9, 5); // three runs of 3 s at 1 credit a second
    expect(job.charged).toBeCloseTo(9, 5);
    expect((await consumer.ledger.statement.query()).consumerBalance).toBeCloseTo(1000 - 9, 5);
    await worker.worker.depart.mutate({ machineId });
    await expectBooksSound();
  });
});

describe("starting credits", () => {
  it("cannot be farmed: sign-ups from one address are limited, and only verified addresses are granted", async () => {
    const limited = await startTestMarket({ SIGNUPS_PER_ADDRESS: "3", STARTING_CREDITS: "100" });
    try {
      const signUp = (i: number) =>
        fetch(`${limited.url}/api/auth/sign-up/email`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: PUBLIC_URL },
          body: JSON.stringify({ email: `farm-${i}@example.test`, password: "correct horse battery", name: "farm" }),
        });
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await signUp(i));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429]);
      const farmer = clientFor(limited.url, { cookie: answers[0]!.headers.getSetCookie().map((c) => c.split(";")[0]).join("; "), origin: PUBLIC_URL });
      const refused = await (await signUp(9)).json();
      expect(refused.message).toMatch(/at most 3 every 60 minutes/);
      // Three accounts, none verified: nothing granted.
      expect(await limited.manager.services.db.ledgerEntry.count({ where: { kind: "grant" } })).toBe(0);
      await verifyEmail(limited.url, limited.outbox, "farm-0@example.test");
      // Verified, but the roles are sign-up's defaults: the grant waits for the consumer role to be chosen.
      expect(await limited.manager.services.db.ledgerEntry.count({ where: { kind: "grant" } })).toBe(0);
      await farmer.account.chooseRoles.mutate({ roles: ["consumer"] });
      const grants = await limited.manager.services.db.ledgerEntry.findMany({ where: { kind: "grant" }, include: { postings: true } });
      expect(grants).toHaveLength(1);
      expect(grants[0]!.postings.find((p) => p.amountMicro > 0n)?.amountMicro).toBe(100_000_000n);
    } finally {
      await limited.stop();
    }
  });
});

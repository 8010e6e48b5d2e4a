import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { DEFAULT_TERMS } from "@cyclemarket/costbenefit";
import { CAT_WAT, LOOP_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { PUBLIC_URL, clientFor, refusal, startTestMarket, verifyEmail, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { runLease, type TestLease } from "../support/worker.ts";

// A price is a promise. Each test is an attack that took money from the market or from a
// consumer before, written as the attacker runs it over the documented protocol against a real
// market: a producer's reported run time, failures it invents, a lease it holds with heartbeats,
// lateness one person causes to collect a penalty, and a job that gave no work estimate. Each
// checks what the attacker ends up with, what the consumer paid against the quote, and that the
// market's own account never goes below minus its reserve.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
type Worker = ReturnType<TestMarket["tokenClient"]>;
const RESERVE = 100_000;
const STARTING = 1000;

beforeAll(async () => {
  market = await startTestMarket({ MARKET_RESERVE: String(RESERVE) });
});
afterAll(() => market?.stop());

/**
 * For the tests of what an expired lease does: leases of their short tasks end after a second
 * instead of the default floor. The other tests keep the floor, so a busy host cannot expire a
 * lease between its grant and its report.
 */
function shortLeases() {
  let terms = DEFAULT_TERMS;
  beforeAll(() => {
    terms = market.manager.services.market.settings.terms;
    market.manager.services.market.settings.terms = { ...terms, leaseFloorSeconds: 1 };
  });
  afterAll(() => {
    market.manager.services.market.settings.terms = terms;
  });
}

const db = () => market.manager.services.db;
const marketBalance = async () => Number((await db().ledgerAccount.findFirst({ where: { kind: "market" } }))?.balanceMicro ?? 0n) / 1e6;
const machine = { kind: "opportunistic" as const, slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, userAgent: "test" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function producer(email: string, roles: ("producer" | "consumer")[] = ["producer", "consumer"]): Promise<{ client: Client; worker: Worker }> {
  const client = await market.signUp(email, roles);
  const worker = market.tokenClient((await client.account.tokens.create.mutate({ name: "rack" })).token);
  return { client, worker };
}

/** Everything an account holds: its consumer and producer balances. */
async function holdings(client: Client) {
  const s = await client.ledger.statement.query();
  return s.consumerBalance + s.producerBalance;
}

function forged(text: string) {
  const stdout = Buffer.from(text);
  return { stdout: stdout.toString("base64"), stderr: "", outputHash: createHash("sha256").update(stdout).digest("hex") };
}

type Curve = { kind: "constant"; value: number } | { kind: "deadline"; value: number; deadline: number; penalty?: number };
const loop = (tasks: number, benefit: Curve, more: { maxSpend?: number; workPerTask?: number } = {}) => ({
  name: "loop",
  source: {
    kind: "upload" as const,
    moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"),
    tasks: Array.from({ length: tasks }, () => ({ args: [] as string[], stdin: "" })),
    workPerTask: more.workPerTask ?? 0.01,
    memoryMbPerTask: 16,
  },
  benefit,
  ...(more.maxSpend === undefined ? {} : { maxSpend: more.maxSpend }),
});

const priceOf = (d: { outcome: string; price?: number }) => (d.outcome === "admitted" ? d.price! : NaN);

/** The first lease `machineId` gets within a few ticks of the market's sweeper. */
async function leaseSoon(worker: Worker, machineId: string) {
  for (const until = Date.now() + 10_000; Date.now() < until; await sleep(200)) {
    const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
    if (lease) return lease;
  }
  throw new Error(`machine ${machineId} got no lease`);
}

async function expectBooksSound() {
  await expectLedgerBalances(db());
  expect(await marketBalance()).toBeGreaterThanOrEqual(-RESERVE);
  const negative = await db().ledgerAccount.count({ where: { kind: { not: "market" }, balanceMicro: { lt: 0n } } });
  expect(negative).toBe(0);
}

describe("a producer's reported run time", () => {
  it("changes no amount: reports at the floor and at 24 days are paid the piece rate, and the consumer pays exactly the quote", async () => {
    const consumer = await market.signUp("buyer1@example.test", ["consumer"]);
    const { client, worker } = await producer("greedy@example.test");
    // 1 credit a second of this machine, speed 1: an ask of 1 credit per reference second.
    const { machineId } = await worker.worker.register.mutate({ ...machine, name: "greedy", pricePerSecond: 1 });
    const { jobId, decision } = await consumer.jobs.submit.mutate(loop(10, { kind: "constant", value: 50 }));
    expect(decision.outcome).toBe("admitted");
    const quoted = priceOf(decision);
    for (let i = 0; i < 10; i++) {
      const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
      expect(lease!.pieceRateMicro).toBe("10000"); // 0.01 s of reference work at 1 credit a second
      const elapsedMs = i % 2 ? 2000 : 2_147_483_000;
      await worker.worker.report.mutate({ machineId, leaseId: lease!.leaseId, exitCode: 0, elapsedMs, ...forged("") });
    }
    const job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    expect(job.charged).toBeCloseTo(quoted, 6);
    expect((await client.ledger.statement.query()).producerBalance).toBeCloseTo(0.1, 9);
    expect((await consumer.ledger.statement.query()).consumerBalance).toBeCloseTo(STARTING - quoted, 6);
    // The market keeps the fee and the congestion of the quote: its profit is the quote less the pieces.
    expect(quoted).toBeGreaterThan(0.1);
    await worker.worker.depart.mutate({ machineId });
    await expectBooksSound();
  });
});

describe("a failed run", () => {
  it("invented by a producer is paid nothing, counts against its machine, and its task runs elsewhere", async () => {
    const consumer = await market.signUp("buyer2@example.test", ["consumer"]);
    const liar = await producer("liar@example.test");
    const { machineId: liarId } = await liar.worker.worker.register.mutate({ ...machine, name: "liar", pricePerSecond: 1 });
    const { jobId, decision } = await consumer.jobs.submit.mutate(loop(1, { kind: "constant", value: 30 }));
    const [lease] = (await liar.worker.worker.lease.mutate({ machineId: liarId, max: 1 })).leases;
    const honest = await producer("honest-runner@example.test");
    const { machineId: honestId } = await honest.worker.worker.register.mutate({ ...machine, name: "honest", pricePerSecond: 1 });
    const trap = { exitCode: -1, elapsedMs: 2000, error: { code: "trap" as const, message: "unreachable" }, ...forged("") };
    await liar.worker.worker.report.mutate({ machineId: liarId, leaseId: lease!.leaseId, ...trap });
    // The task is not handed back to the machine that said it failed: another owner must run it.
    expect((await liar.worker.worker.lease.mutate({ machineId: liarId, max: 1 })).leases).toHaveLength(0);
    const rerun = await leaseSoon(honest.worker, honestId);
    await honest.worker.worker.report.mutate({ machineId: honestId, leaseId: rerun.leaseId, exitCode: 0, elapsedMs: 5, ...forged("") });
    const job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    expect(job.charged).toBeCloseTo(priceOf(decision), 6);
    // The page lists the invented failure as nobody's but the liar's: unpaid, the task done since.
    expect(job.failures.tasks).toEqual([{ taskIndex: 0, status: "done", runs: 1, confirmed: 0, codes: ["trap"] }]);
    expect((await liar.client.ledger.statement.query()).producerBalance).toBe(0);
    // The honest run contradicted the liar's failure: a fact against its account's standing.
    const { owner } = await db().machine.findUniqueOrThrow({ where: { id: liarId }, select: { owner: { select: { standing: true } } } });
    expect(owner.standing?.unconfirmedFailures).toBe(1);
    for (const [w, id] of [[liar.worker, liarId], [honest.worker, honestId]] as const) await w.worker.depart.mutate({ machineId: id });
    await expectBooksSound();
  });

  it("is paid only once a machine of another owner reproduces it, and a job whose every task fails that way fails", async () => {
    const consumer = await market.signUp("buyer3@example.test", ["consumer"]);
    const a = await producer("trap-a@example.test");
    const b = await producer("trap-b@example.test");
    const { machineId: aId } = await a.worker.worker.register.mutate({ ...machine, name: "a", pricePerSecond: 1 });
    const { jobId } = await consumer.jobs.submit.mutate(loop(1, { kind: "constant", value: 30 }));
    const trap = { exitCode: -1, elapsedMs: 5, error: { code: "trap" as const, message: "unreachable" }, ...forged("") };
    const [first] = (await a.worker.worker.lease.mutate({ machineId: aId, max: 1 })).leases;
    await a.worker.worker.report.mutate({ machineId: aId, leaseId: first!.leaseId, ...trap });
    expect((await a.client.ledger.statement.query()).producerBalance).toBe(0);
    const { machineId: bId } = await b.worker.worker.register.mutate({ ...machine, name: "b", pricePerSecond: 1 });
    await expect.poll(async () => (await db().task.findFirstOrThrow({ where: { jobId } })).machineId, { timeout: 10_000 }).toBe(bId);
    const [second] = (await b.worker.worker.lease.mutate({ machineId: bId, max: 1 })).leases;
    await b.worker.worker.report.mutate({ machineId: bId, leaseId: second!.leaseId, ...trap });
    const job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("failed");
    // Both runs are paid their piece rate, charged to the consumer's escrow; nothing else.
    expect((await a.client.ledger.statement.query()).producerBalance).toBeCloseTo(0.01, 9);
    expect((await b.client.ledger.statement.query()).producerBalance).toBeCloseTo(0.01, 9);
    expect(job.charged).toBeCloseTo(0.02, 9);
    expect((await db().result.count({ where: { lease: { task: { jobId } }, failureConfirmed: true } }))).toBe(2);
    expect(job.failures.tasks).toEqual([{ taskIndex: 0, status: "failed", runs: 2, confirmed: 2, codes: ["trap"] }]);
    for (const [w, id] of [[a.worker, aId], [b.worker, bId]] as const) await w.worker.depart.mutate({ machineId: id });
    await expectBooksSound();
  });
});

describe("a lease", () => {
  shortLeases();
  it("held by heartbeats past its time expires all the same: the task runs elsewhere and the holder earns nothing", async () => {
    const consumer = await market.signUp("buyer4@example.test", ["consumer"]);
    const holder = await producer("holder@example.test");
    const { machineId: holderId } = await holder.worker.worker.register.mutate({ ...machine, name: "holder", pricePerSecond: 1 });
    const { jobId } = await consumer.jobs.submit.mutate(loop(1, { kind: "constant", value: 30 }));
    const [lease] = (await holder.worker.worker.lease.mutate({ machineId: holderId, max: 1 })).leases;
    expect(lease!.expiresAt - Date.now()).toBeLessThanOrEqual(1500);
    // A cheaper machine joins: once the lease ends, the task is placed there.
    const honest = await producer("fast@example.test");
    const { machineId: honestId } = await honest.worker.worker.register.mutate({ ...machine, name: "fast", pricePerSecond: 0.5 });
    for (let i = 0; i < 6; i++) {
      await holder.worker.worker.heartbeat.mutate({ machineId: holderId, leaseIds: [lease!.leaseId] });
      await sleep(400);
    }
    expect((await db().lease.findUniqueOrThrow({ where: { id: lease!.leaseId } })).status).toBe("expired");
    const rerun = await leaseSoon(honest.worker, honestId);
    await honest.worker.worker.report.mutate({ machineId: honestId, leaseId: rerun.leaseId, exitCode: 0, elapsedMs: 5, ...forged("") });
    // The holder's own result comes too late: its task was decided.
    const stale = await refusal(holder.worker.worker.report.mutate({ machineId: holderId, leaseId: lease!.leaseId, exitCode: 0, elapsedMs: 5, ...forged("") }));
    expect(stale.code).toBe("stale-lease");
    expect((await consumer.jobs.get.query({ jobId })).status).toBe("completed");
    expect((await holder.client.ledger.statement.query()).producerBalance).toBe(0);
    expect((await honest.client.ledger.statement.query()).producerBalance).toBeCloseTo(0.005, 9);
    for (const [w, id] of [[holder.worker, holderId], [honest.worker, honestId]] as const) await w.worker.depart.mutate({ machineId: id });
    await expectBooksSound();
  });
});

describe("lateness", () => {
  shortLeases();
  const penalty = { kind: "deadline" as const, value: 20, deadline: 1, penalty: -20 };

  /** One round of the farming attack: submit as `buyer`, take the lease on `late`'s machine, let it expire, report after the deadline. */
  async function lateRound(buyer: Client, late: { worker: Worker }, machineId: string) {
    const { jobId, decision } = await buyer.jobs.submit.mutate(loop(1, penalty));
    expect(decision.outcome).toBe("admitted");
    const [lease] = (await late.worker.worker.lease.mutate({ machineId, max: 1 })).leases;
    for (let i = 0; i < 5; i++) {
      await late.worker.worker.heartbeat.mutate({ machineId, leaseIds: [lease!.leaseId] });
      await sleep(400);
    }
    // Past the deadline and past its lease's time; no one else ran it, so the late result is still the first.
    await late.worker.worker.report.mutate({ machineId, leaseId: lease!.leaseId, exitCode: 0, elapsedMs: 5, ...forged("") });
    const job = await buyer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    return { price: priceOf(decision), job };
  }

  it("cannot be farmed by one person's account: the penalty is never paid from their own machine's lateness or the market's reserve", async () => {
    const farmer = await producer("farmer@example.test");
    const { machineId } = await farmer.worker.worker.register.mutate({ ...machine, name: "farm", pricePerSecond: 1 });
    const before = await holdings(farmer.client);
    const reserveBefore = await marketBalance();
    for (let round = 0; round < 2; round++) {
      const { price, job } = await lateRound(farmer.client, farmer, machineId);
      expect(job.charged).toBeCloseTo(price, 6);
      expect(job.chargeReasons.map((r) => r.code)).toContain("lateness-unfunded");
    }
    expect(await holdings(farmer.client)).toBeLessThanOrEqual(before);
    expect(await marketBalance()).toBeGreaterThanOrEqual(reserveBefore);
    await farmer.worker.worker.depart.mutate({ machineId });
    await expectBooksSound();
  });

  it("is paid to a consumer from a late producer's held piece, so two colluding accounts end with no more than an honest run gives them", async () => {
    const buyer = await market.signUp("collude-buyer@buyer.test", ["consumer"]);
    const late = await producer("collude-seller@seller.test", ["producer"]);
    const { machineId } = await late.worker.worker.register.mutate({ ...machine, name: "collude", pricePerSecond: 1 });
    const before = (await holdings(buyer)) + (await holdings(late.client));
    const reserveBefore = await marketBalance();
    const { price, job } = await lateRound(buyer, late, machineId);
    // Relieved by the producer's piece (0.01), which the producer forfeits; the quote stands for the rest.
    expect(job.chargeReasons.map((r) => r.code)).toEqual(["charged-price", "lateness-relief", "lateness-unfunded"]);
    expect(job.charged).toBeCloseTo(price - 0.01, 6);
    expect((await late.client.ledger.statement.query()).producerBalance).toBe(0);
    // An honest run: the buyer pays the quote, the seller earns the piece.
    const honest = -price + 0.01;
    expect((await holdings(buyer)) + (await holdings(late.client)) - before).toBeLessThanOrEqual(honest + 1e-9);
    expect(await marketBalance()).toBeGreaterThanOrEqual(reserveBefore);
    await late.worker.worker.depart.mutate({ machineId });
    await expectBooksSound();
  });
});

describe("a job without a work estimate", () => {
  it("is quoted its pilots' stated cost, and a newcomer's job with benefit 50 completes within it", async () => {
    const newcomer = await market.signUp("newcomer@example.test", ["consumer"]);
    const seller = await producer("pilot-seller@example.test", ["producer"]);
    const { machineId } = await seller.worker.worker.register.mutate({ ...machine, slots: 4, name: "pilots", pricePerSecond: 0.001 });
    try {
      // Twenty tasks of a real program, and no work estimate.
      const job = {
        name: "no estimate",
        source: { kind: "upload" as const, moduleBase64: Buffer.from(wat(CAT_WAT)).toString("base64"), tasks: Array.from({ length: 20 }, (_, i) => ({ args: [], stdin: Buffer.from(`line ${i}`).toString("base64") })), memoryMbPerTask: 16 },
        benefit: { kind: "constant" as const, value: 50 },
      };
      const quote = await newcomer.jobs.quote.mutate(job);
      expect(quote).toMatchObject({ outcome: "admitted", provisional: true, pilots: 3 });
      expect(priceOf(quote)).toBeLessThan(1);
      const { jobId } = await newcomer.jobs.submit.mutate(job);
      for (const until = Date.now() + 30_000; (await newcomer.jobs.get.query({ jobId })).status !== "completed" && Date.now() < until; await sleep(100)) {
        for (const lease of (await seller.worker.worker.lease.mutate({ machineId, max: 4 })).leases) {
          // This cheap machine may also be handed a task of an earlier test's job still queued, a
          // module that loops forever: run here, it would block this process for good. Only this
          // job's tasks run; another's lapses and goes back to the market.
          if (lease.jobId !== jobId) continue;
          await seller.worker.worker.report.mutate(await runLease(seller.worker, machineId, lease as TestLease));
        }
      }
      const done = await newcomer.jobs.get.query({ jobId });
      expect(done.status).toBe("completed");
      expect(done.charged).toBeGreaterThan(0);
      expect(done.charged!).toBeLessThanOrEqual(50);
    } finally {
      await seller.worker.worker.depart.mutate({ machineId });
    }
    await expectBooksSound();
  });
});

describe("a job whose measured work contradicts its estimate", () => {
  it("is charged more only up to the maxSpend its consumer set, and the page says why", async () => {
    const consumer = await market.signUp("underestimate@example.test", ["consumer"]);
    // Three owners measure it: fewer could not move the measured work at all.
    const sellers = await Promise.all(["slow-a@a.test", "slow-b@b.test", "slow-c@c.test"].map((email) => producer(email, ["producer"])));
    const ids = await Promise.all(sellers.map(async (p, i) => (await p.worker.worker.register.mutate({ ...machine, slots: 2, name: `slow-${i}`, pricePerSecond: 1 })).machineId));
    try {
      const { jobId, decision } = await consumer.jobs.submit.mutate(loop(6, { kind: "constant", value: 100 }, { maxSpend: 5 }));
      const quoted = priceOf(decision);
      expect(quoted).toBeLessThan(5);
      // Each task really takes 0.3 s, thirty times the 0.01 s declared: the market's clock sees it.
      const leased = await Promise.all(sellers.map(async (p, i) => ({ p, id: ids[i]!, leases: (await p.worker.worker.lease.mutate({ machineId: ids[i]!, max: 2 })).leases })));
      expect(leased.reduce((n, l) => n + l.leases.length, 0)).toBe(6);
      await sleep(300);
      for (const { p, id, leases } of leased) {
        for (const lease of leases) await p.worker.worker.report.mutate({ machineId: id, leaseId: lease.leaseId, exitCode: 0, elapsedMs: 300, ...forged("") });
      }
      const job = await consumer.jobs.get.query({ jobId });
      expect(job.status).toBe("completed");
      expect(job.charged!).toBeGreaterThan(quoted);
      expect(job.charged!).toBeLessThanOrEqual(5);
      expect(job.chargeReasons[0]).toMatchObject({ code: "charged-measured-work", maxSpend: 5 });
    } finally {
      for (const [i, p] of sellers.entries()) await p.worker.worker.depart.mutate({ machineId: ids[i]! });
    }
    await expectBooksSound();
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
    const pi = (replicas: number) => ({
      name: "pi",
      source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 1000 }, taskCount: 1 },
      benefit: { kind: "constant" as const, value: 30 },
      replicas,
    });
    try {
      // Four machines but two owners: three copies that verify each other cannot be placed.
      const three = await consumer.jobs.submit.mutate(pi(3));
      expect(three.decision.outcome).toBe("delayed");
      expect(three.decision.reasons).toContainEqual(expect.objectContaining({ code: "needs-more-machines", replicas: 3, ownersConnected: 2 }));
      await consumer.jobs.cancel.mutate({ jobId: three.jobId });

      const { jobId, decision } = await consumer.jobs.submit.mutate(pi(2));
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
      expect(await db().result.count({ where: { lease: { task: { jobId } }, accepted: true } })).toBe(0);
      expect(job.waiting.reasons[0]).toMatchObject({ code: "needs-another-machine", ownersConnected: 1 });
      await consumer.jobs.cancel.mutate({ jobId });
    } finally {
      for (const machineId of ids) await sybil.worker.worker.depart.mutate({ machineId });
      await honest.worker.worker.depart.mutate({ machineId: honestId }).catch(() => {});
    }
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
    const dear = loop(1, { kind: "constant", value: 50_000 }, { workPerTask: 50 });
    // The quote already says it: not admitted, with the price the job would cost and what is missing.
    const priceOf = (q: Awaited<ReturnType<typeof consumer.jobs.quote.mutate>>) =>
      q.outcome === "rejected" ? ((q.reasons.find((r) => r.code === "insufficient-credits") as { price?: number } | undefined)?.price ?? null) : null;
    const quoted = priceOf(await consumer.jobs.quote.mutate(dear));
    expect(quoted).toBeGreaterThan(before);
    const refused = await refusal(consumer.jobs.submit.mutate(dear));
    expect(refused).toMatchObject({ code: "insufficient-credits", balance: before });
    // The engine counted the job's load while its statement was written, and forgot it when the
    // statement was refused: the same job is priced as before.
    expect(priceOf(await consumer.jobs.quote.mutate(dear))).toBe(quoted);
    expect(refused.needed as number).toBeGreaterThan(before);
    expect(refused.message).toMatch(/credits in escrow/);
    expect(await consumer.jobs.list.query()).toEqual([]);
    expect(await db().ledgerEntry.count({ where: { kind: "escrow" } })).toBe(escrowsBefore);
    expect((await consumer.ledger.statement.query()).consumerBalance).toBe(before);
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

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_TERMS } from "@cyclemarket/costbenefit";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { catJob, runLease, type TestLease } from "../support/worker.ts";
import { giveStanding } from "../support/standing.ts";

// OPEN HOLE, kept as a runnable attack: the market does not withstand it yet, so the test is
// marked it.fails (Vitest fails the run once it passes: then the hole is closed and it becomes
// it()). docs/ARCHITECTURE.md, "Open holes", says what closing it needs.

// The work a lease is fixed at moves from the consumer's estimate to what machines of three other
// owners measured: the market's clock between lease and report, lowered by the reported time,
// times the machine's speed. Both factors are the producer's to choose: it may hold a finished
// result until its lease is about to end, and its speed is the benchmark it claimed at
// registration (up to 50 reference machines), believed until the job's work is known, which is
// what is being measured. The attack: three producers, one machine each claiming speed 50, each
// runs its first task of a victim's job honestly (a few milliseconds) and reports it a little
// later, saying it took that long. Each sample is then the held time times 50; the attackers aim
// it just under what keeps the consumer's charge within their maxSpend, and every later lease of
// the job pays for that much work.

type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
type Worker = ReturnType<TestMarket["tokenClient"]>;
interface Attacker {
  client: Client;
  worker: Worker;
  machineId: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A producer whose machine claims 50 reference machines and asks 1 credit per reference second (50 a second of its own). */
async function attacker(market: TestMarket, name: string, standing: boolean): Promise<Attacker> {
  const email = `${name}@${name}.test`;
  const client = await market.signUp(email, ["producer"]);
  if (standing) await giveStanding(market.manager.services.db, email);
  const worker = market.tokenClient((await client.account.tokens.create.mutate({ name })).token);
  const { machineId } = await worker.worker.register.mutate({ name, kind: "opportunistic", slots: 1, speed: 50, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 50, userAgent: "test" });
  return { client, worker, machineId };
}

// True: each task runs in a few milliseconds. The consumer allows room over the quote, as one does for a rough estimate.
const cat = (tasks: number) => catJob(tasks, { value: 100, maxSpend: 20 });


/** Runs the attack on a victim's 12-task job; returns what the job and the attackers ended with. */
async function attack(market: TestMarket, attackers: Attacker[], victim: string) {
  const db = market.manager.services.db;
  const consumer = await market.signUp(`${victim}@${victim}.test`, ["consumer"]);
  const { jobId, decision } = await consumer.jobs.submit.mutate(cat(12));
  expect(decision.outcome).toBe("admitted");
  const quoted = decision.outcome === "admitted" ? decision.price! : NaN;
  // The measured work aimed at: the admitted plan priced at that work (the points fixed at
  // admission, which the consumer's page shows too) stays within the consumer's maxSpend.
  const points = market.manager.services.market.state.jobs.get(jobId)!.priceAtWork!;
  const ratio = Math.max(...points.filter((p) => p.price <= 15).map((p) => p.ratio));
  const claimedMs = Math.round(((ratio * 0.01) / 50) * 1000);

  for (let round = 0; round < 20; round++) {
    const status = (await consumer.jobs.get.query({ jobId })).status;
    if (status !== "admitted" && status !== "running") break;
    const held = await Promise.all(attackers.map(async (a) => ({ a, leases: (await a.worker.worker.lease.mutate({ machineId: a.machineId, max: 1 })).leases })));
    if (!held.some((h) => h.leases.length)) {
      await sleep(200);
      continue;
    }
    // Run each task honestly at once; report it once the claimed time has passed on the market's clock.
    const reports = await Promise.all(held.flatMap(({ a, leases }) => leases.map(async (l) => ({ a, report: await runLease(a.worker, a.machineId, l as TestLease, claimedMs) }))));
    await sleep(claimedMs + 50);
    for (const { a, report } of reports) await a.worker.worker.report.mutate(report).catch(() => undefined);
  }
  const job = await consumer.jobs.get.query({ jobId });
  const { workPerTask } = await db.job.findUniqueOrThrow({ where: { id: jobId }, select: { workPerTask: true } });
  const earned = (await Promise.all(attackers.map(async (a) => (await a.client.ledger.statement.query()).producerBalance))).reduce((s, x) => s + x, 0);
  for (const a of attackers) await a.worker.worker.depart.mutate({ machineId: a.machineId });
  await expectLedgerBalances(db);
  return { quoted, ratio, result: { status: job.status, workPerTask, earned: +earned.toFixed(6), charged: +job.charged!.toFixed(6) } };
}

/**
 * What the market owes the job's true shape: it completes, its leases keep paying the declared
 * 0.01 reference seconds (the twelve runs earn 12 x 0.01 x 1 credit), and the consumer, whose
 * estimate was right, pays the quote.
 */
const honestOutcome = (quoted: number) => ({ status: "completed", workPerTask: expect.closeTo(0.01, 9), earned: expect.closeTo(0.12, 6), charged: expect.closeTo(quoted, 6) });

describe("in a closed market, three producers holding honest results on machines claiming speed 50", () => {
  let market: TestMarket;
  beforeAll(async () => {
    market = await startTestMarket();
    // Leases of these short tasks last at least a second instead of the default floor of 10.
    market.manager.services.market.settings.terms = { ...DEFAULT_TERMS, leaseFloorSeconds: 1 };
  });
  afterAll(() => market?.stop());

  // HOLE: the leases pay for 1 reference second (100 times the work), the attackers take about 9
  // credits and the consumer is charged about 13.7 on a quote of 0.62.
  it.fails("cannot raise the work a job's leases pay for, nor what its consumer is charged", async () => {
    const attackers = await Promise.all(["hold-a", "hold-b", "hold-c"].map((n) => attacker(market, n, false)));
    const { quoted, ratio, result } = await attack(market, attackers, "victim");
    expect(ratio).toBe(100);
    expect(result).toEqual(honestOutcome(quoted));
  });
});

describe("in an open market, three accounts with standing holding honest results on machines claiming speed 50", () => {
  let market: TestMarket;
  beforeAll(async () => {
    market = await startTestMarket({ TRUST_ALL_PRODUCERS: "0" });
    market.manager.services.market.settings.terms = { ...DEFAULT_TERMS, leaseFloorSeconds: 1 };
  });
  afterAll(() => market?.stop());

  it.fails("cannot raise the work a job's leases pay for, nor what its consumer is charged", async () => {
    const attackers = await Promise.all(["stand-a", "stand-b", "stand-c"].map((n) => attacker(market, n, true)));
    const { quoted, result } = await attack(market, attackers, "open-victim");
    expect(result).toEqual(honestOutcome(quoted));
  });
});

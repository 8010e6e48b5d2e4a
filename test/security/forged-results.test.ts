import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { runTask } from "../../apps/worker-runtime/src/sandbox.ts";
import { clientFor, signUp, startTestMarket, type TestMarket } from "../support/market.ts";
import { giveStanding } from "../support/standing.ts";

// Forged results, tried as an attacker would against an open market (TRUST_ALL_PRODUCERS=0):
// accounts cost nothing, so fresh ones forging together must never get a result accepted, and a
// producer that earned standing and then forges must be caught by a spot check, losing its
// standing and what the job paid it.

let market: TestMarket;
type Worker = ReturnType<TestMarket["tokenClient"]>;
type Leased = Awaited<ReturnType<Worker["worker"]["lease"]["mutate"]>>["leases"][number];
interface Producer {
  name: string;
  userId: string;
  client: Worker;
  session: ReturnType<typeof clientFor>;
  machineId: string;
}

const db = () => market.manager.services.db;
const machine = (name: string) => ({ name, kind: "opportunistic" as const, slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test" });
const FORGED = Buffer.from("FORGED RESULT\n");

beforeAll(async () => {
  market = await startTestMarket({ TRUST_ALL_PRODUCERS: "0" });
});
afterAll(() => market?.stop());

/**
 * A producer: fresh and unconfirmed (sign-up alone), or one that earned standing a week ago (50
 * verified results, a confirmed address). Each at its own organisation's domain: two confirmed
 * accounts of one domain are one vote.
 */
async function producer(name: string, kind: "fresh" | "standing", address?: string): Promise<Producer> {
  const email = `${name}@${name}.test`;
  const session = kind === "fresh" ? await signUp(market.url, email, ["producer"]) : await market.signUp(email, ["producer"]);
  const user = await db().user.findUniqueOrThrow({ where: { email } });
  // What the market would have recorded of a week of verified work.
  if (kind === "standing") await giveStanding(db(), email, { days: 7, verified: 50 });
  const token = (await session.account.tokens.create.mutate({ name })).token;
  // The address its worker connects from, as a proxy the manager trusts reports it (the web app on this host).
  const client = address ? clientFor(market.url, { authorization: `Bearer ${token}`, "x-forwarded-for": address }) : market.tokenClient(token);
  const { machineId } = await client.worker.register.mutate(machine(name));
  return { name, userId: user.id, client, session, machineId };
}

async function honestReport(p: Producer, lease: Leased) {
  const { bytes } = await p.client.worker.module.query({ moduleHash: lease.moduleHash });
  const out = await runTask({ module: new Uint8Array(Buffer.from(bytes, "base64")), args: lease.args, seed: lease.seed ?? lease.taskId, limits: lease.limits });
  await p.client.worker.report.mutate({ machineId: p.machineId, leaseId: lease.leaseId, exitCode: out.exitCode, stdout: Buffer.from(out.stdout).toString("base64"), stderr: "", outputHash: out.outputHash, elapsedMs: 1000 });
  return Buffer.from(out.stdout).toString("utf8");
}

async function forgedReport(p: Producer, lease: Leased) {
  await p.client.worker.report.mutate({
    machineId: p.machineId, leaseId: lease.leaseId, exitCode: 0, stdout: FORGED.toString("base64"), stderr: "",
    outputHash: createHash("sha256").update(FORGED).digest("hex"), elapsedMs: 1000,
  });
}

const lease = async (p: Producer, max = 4) => (await p.client.worker.lease.mutate({ machineId: p.machineId, max })).leases;

/** Lets the honest machines take and run whatever is offered to them until the job ends (the sweeper places added copies within a second). */
async function honestUntilDone(consumer: ReturnType<typeof clientFor>, jobId: string, honest: Producer[], forgers: Producer[] = []) {
  for (let i = 0; i < 100; i++) {
    const job = await consumer.jobs.get.query({ jobId });
    if (job.status === "completed" || job.status === "failed") return job;
    // The forgers ask too: no copy verification added may go to them.
    for (const f of forgers) expect(await lease(f)).toEqual([]);
    for (const p of honest) for (const l of await lease(p)) await honestReport(p, l);
    await new Promise((r) => setTimeout(r, 150));
  }
  const tasks = await db().task.findMany({ where: { jobId }, select: { id: true, replica: true, status: true, machineId: true } });
  const live = tasks.map((t) => ({ ...t, live: market.manager.services.market.state.tasks.get(t.id) }));
  throw new Error(`the job did not end: ${JSON.stringify(live, (_, v) => (typeof v === "bigint" ? String(v) : v))} machines ${JSON.stringify(honest.map((h) => h.machineId))}`);
}

const montecarlo = (name: string, taskCount: number, replicas: number) => ({
  name,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 20_000 }, taskCount },
  benefit: { kind: "constant" as const, value: 40 },
  replicas,
});

describe("fresh accounts forging together", () => {
  it("cannot get a forged result accepted on a replicas: 3 job; two accounts with standing settle it and the forgers are caught", async () => {
    const f1 = await producer("forger-one", "fresh");
    const f2 = await producer("forger-two", "fresh");
    const newcomer = await producer("newcomer", "fresh");
    const consumer = await market.signUp("victim@example.test", ["consumer"]);
    const { jobId, decision } = await consumer.jobs.submit.mutate(montecarlo("three copies", 1, 3));
    expect(decision.outcome).toBe("admitted");

    const [l1] = await lease(f1);
    const [l2] = await lease(f2);
    const [l3] = await lease(newcomer);
    await forgedReport(f1, l1!);
    await forgedReport(f2, l2!);
    const real = await honestReport(newcomer, l3!);
    // Two of three copies agree, but nobody with standing does: nothing is accepted, nothing served.
    const waiting = await consumer.jobs.get.query({ jobId });
    expect(waiting.status).not.toBe("completed");
    expect(await consumer.jobs.outputs.query({ jobId })).toEqual([]);
    expect(await db().result.count({ where: { lease: { task: { jobId } }, accepted: true } })).toBe(0);
    // The copies verification added wait for accounts with standing: the forgers never get them.
    await new Promise((r) => setTimeout(r, 1500));
    for (const p of [f1, f2, newcomer]) expect(await lease(p)).toEqual([]);

    const a = await producer("standing-a", "standing");
    const b = await producer("standing-b", "standing");
    const job = await honestUntilDone(consumer, jobId, [a, b], [f1, f2]);
    expect(job.status).toBe("completed");
    const outputs = await consumer.jobs.outputs.query({ jobId });
    expect(outputs.map((o) => o.stdoutText)).toEqual([real]);

    // Caught: recorded as forgers, paid nothing; the newcomer's agreeing run was verified and paid.
    for (const f of [f1, f2]) {
      expect(await db().standing.findUnique({ where: { userId: f.userId } })).toMatchObject({ forgeries: 1 });
      expect((await f.session.ledger.statement.query()).producerBalance).toBe(0);
    }
    expect(await db().standing.findUnique({ where: { userId: newcomer.userId } })).toMatchObject({ verified: 1, forgeries: 0 });
    expect((await newcomer.session.ledger.statement.query()).producerBalance).toBeGreaterThan(0);
    // The job's escrow paid the one copy of its three that agreed and the copies verification
    // added, within what the consumer was charged (the forgers' pieces paid the checks); the
    // market's account paid nothing.
    const paid = async (kind: "escrow" | "market") =>
      -((await db().ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { jobId, kind: "payment" }, account: { kind } } }))._sum.amountMicro ?? 0n);
    expect(await paid("escrow")).toBeGreaterThan(BigInt(l3!.pieceRateMicro ?? 0));
    expect(await paid("escrow")).toBeLessThanOrEqual(BigInt(Math.round(job.charged! * 1e6)));
    expect(await paid("market")).toBe(0n);
    for (const p of [f1, f2, newcomer, a, b]) await p.client.worker.depart.mutate({ machineId: p.machineId });
  });
});

describe("accounts with standing behind one network", () => {
  it("are one vote: the second never runs a copy beside the first, and the forgery is outvoted by other networks", async () => {
    const f1 = await producer("lan-one", "standing", "203.0.113.7");
    const f2 = await producer("lan-two", "standing", "203.0.113.8");
    const honest = await producer("elsewhere", "standing", "198.51.100.5");
    const consumer = await market.signUp("victim-three@example.test", ["consumer"]);
    const { jobId, decision } = await consumer.jobs.submit.mutate(montecarlo("three copies, one network", 1, 3));
    expect(decision.outcome).toBe("admitted");
    const [l1] = await lease(f1);
    await forgedReport(f1, l1!);
    // Its neighbour on the same /24 may not run another copy of the task.
    expect(await lease(f2)).toEqual([]);
    const [l3] = await lease(honest);
    const real = await honestReport(honest, l3!);
    expect(await db().result.count({ where: { lease: { task: { jobId } }, accepted: true } })).toBe(0);

    // The last copy goes to another network's machine: two against one account with standing is
    // no verdict yet (a margin of two settles a contest), so one more copy, on another machine.
    const third = await producer("third-network", "standing", "192.0.2.9");
    const fourth = await producer("fourth-account", "standing");
    try {
      const job = await honestUntilDone(consumer, jobId, [third, fourth], [f2]);
      expect(job.status).toBe("completed");
      expect((await consumer.jobs.outputs.query({ jobId })).map((o) => o.stdoutText)).toEqual([real]);
      expect(await db().standing.findUnique({ where: { userId: f1.userId } })).toMatchObject({ forgeries: 1 });
      expect((await f1.session.ledger.statement.query()).producerBalance).toBe(0);
    } finally {
      for (const p of [f1, f2, honest, third, fourth]) await p.client.worker.depart.mutate({ machineId: p.machineId });
    }
  });
});

describe("a producer with standing that forges", () => {
  it("is caught by a spot check, loses its standing and the pay of every task of that job it ran", async () => {
    const forger = await producer("turncoat", "standing");
    const consumer = await market.signUp("victim-two@example.test", ["consumer"]);
    const { jobId, decision } = await consumer.jobs.submit.mutate(montecarlo("two tasks", 2, 1));
    expect(decision.outcome).toBe("admitted");
    const before = (await consumer.ledger.statement.query()).consumerBalance;
    // Its machine is the only one: it takes both tasks, runs the first honestly and forges the second.
    const leases = await lease(forger, 2);
    expect(leases).toHaveLength(2);
    const [first, second] = leases.sort((x, y) => x.args.join().localeCompare(y.args.join()));
    await honestReport(forger, first!);
    await forgedReport(forger, second!);
    // With 50 verified results every single-copy result of its account is checked: nothing is accepted yet.
    expect(await db().result.count({ where: { lease: { task: { jobId } }, accepted: true } })).toBe(0);

    // Two checks agreeing against an account with standing are no verdict yet: a third settles it.
    const checkers = [await producer("checker-a", "standing"), await producer("checker-b", "standing"), await producer("checker-c", "standing")];
    const job = await honestUntilDone(consumer, jobId, checkers, [forger]);
    expect(job.status).toBe("completed");
    expect((await consumer.jobs.outputs.query({ jobId })).map((o) => o.stdoutText)).not.toContain(FORGED.toString());

    const facts = await db().standing.findUniqueOrThrow({ where: { userId: forger.userId } });
    expect(facts.forgeries).toBe(1);
    // Its first task was verified and paid, then the job took that pay back: it ends with nothing.
    expect((await forger.session.ledger.statement.query()).producerBalance).toBe(0);
    expect(await db().ledgerEntry.count({ where: { jobId, kind: "forfeit" } })).toBe(1);
    // The producer sees its standing gone and why; the admin's machine list says so too.
    const mine = await forger.session.machines.standing.query();
    expect(mine).toMatchObject({ has: false, forged: true });
    const overview = await (await market.signIn(...(await adminLogin()))).admin.overview.query();
    expect(overview.machines.find((m) => m.id === forger.machineId)!.standing).toMatchObject({ forged: true, has: false });
    // The forfeit went to the market's account; the consumer paid no more than the quote.
    const after = (await consumer.ledger.statement.query()).consumerBalance;
    expect(before - after).toBeLessThanOrEqual(Number(decision.outcome === "admitted" ? decision.price : 0) + 1e-6);
    for (const p of [forger, ...checkers]) await p.client.worker.depart.mutate({ machineId: p.machineId });
  });
});

async function adminLogin(): Promise<[string, string]> {
  const admin = market.manager.admin;
  if (!admin) throw new Error("the test market made no admin");
  return [admin.email, admin.password];
}

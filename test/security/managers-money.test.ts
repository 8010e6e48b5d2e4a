import { describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import { LOOP_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { addStandingFacts } from "../../apps/market-manager/src/db/sql/standing-facts.ts";
import { runStatement } from "../../apps/market-manager/src/db/sql/statement.ts";
import { viaPrisma } from "../../apps/market-manager/src/db/sql/runners.ts";
import { expectLedgerBalances, expectMarketInvariants, withDb } from "../support/books.ts";
import { managersOnOneDatabase } from "../support/managers.ts";
import { clientFor, refusal, signIn } from "../support/market.ts";
import { exit, signUp, waitFor, type ManagerProcess } from "../support/processes.ts";

// Attacks on the market's money that need several Market Managers on one PostgreSQL (issue 47),
// each made as a participant would make it against two real managers, and each answered by the
// market: refused with its reason, or paid exactly once, with the ledger at zero.

// A small queue quota, so that the quota's attack below is a few jobs of a few tasks.
const QUEUE_QUOTA = 100;
const { database, start } = await managersOnOneDatabase("cyclemarket-managers-money-", { QUEUED_TASKS_PER_USER: String(QUEUE_QUOTA) });
const first = await start("manager-1");
const second = await start("manager-2");
const admin = await signIn(first.url, first.admin!.email, first.admin!.password);
await waitFor("both managers to see each other alive", async () => ((await admin.admin.managers.query()).managers.filter((m) => m.alive).length === 2 ? true : undefined), 20_000);

/** A confirmed producer's API token, signed up at the first manager; a worker's client for it at each manager. */
async function producer(email: string) {
  const account = await signUp(first.url, email, ["producer"], first.outbox);
  const { token } = await account.account.tokens.create.mutate({ name: "rack" });
  const at = (m: ManagerProcess) => clientFor(m.url, { authorization: `Bearer ${token}` });
  return { account, token, at };
}

const hardware = { memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, userAgent: "test", speed: 1, pricePerSecond: 0 };
const dedicated = (name: string, contractPrice: number) => ({ ...hardware, name, kind: "dedicated" as const, slots: 64, contractPrice, departsAt: Date.now() + 86_400_000 });

/** What the account's active dedicated machines are still owed, across every manager (credits). */
const owedTo = (userId: string) =>
  withDb(database.url, async (db) => {
    const rows = await db.machine.findMany({ where: { ownerId: userId, kind: "dedicated", status: "active" }, select: { contractPriceMicro: true, contractPaidMicro: true, managerId: true } });
    return { owed: rows.reduce((s, r) => s + Number(r.contractPriceMicro! - r.contractPaidMicro), 0) / 1e6, managers: rows.map((r) => r.managerId).sort() };
  });

describe("a dedicated contract's ceiling across managers", () => {
  // The ceiling (costbenefit contractCeiling) bounds what the market may owe one account in
  // contracts: a confirmed account new to the market may be promised 10 credits. The attack: the
  // same account offers a second dedicated machine, without an offer key, to the other manager,
  // which counted only the contracts it held itself, and is promised twice its ceiling.
  it("counts the contracts every manager holds for the account", async () => {
    const lessor = await producer("twice-lessor@example.test");
    const { offer, machineId } = await lessor.at(first).worker.register.mutate(dedicated("rack-a", 6));
    expect(offer?.[0]?.code).toBe("offer-accepted");
    const second6 = await refusal(lessor.at(second).worker.register.mutate(dedicated("rack-b", 6)));
    expect(second6).toMatchObject({ code: "offer-refused", refusal: { code: "offer-over-standing", contractPrice: 6, ceiling: 10 } });
    expect((second6.refusal as { promised: number }).promised).toBeGreaterThan(5.9);
    const me = (await lessor.account.account.me.query())!;
    expect(await owedTo(me.id)).toEqual({ owed: 6, managers: ["manager-1"] });
    // Gone, so that the later attacks' jobs are not placed on its bought capacity.
    await lessor.at(first).worker.depart.mutate({ machineId });
  });

  // The same, raced: one offer to each manager at the same moment. At most one is promised.
  it("lets at most one of two offers made at once to two managers through", async () => {
    const lessor = await producer("racing-lessor@example.test");
    const answers = await Promise.allSettled([lessor.at(first).worker.register.mutate(dedicated("race-a", 6)), lessor.at(second).worker.register.mutate(dedicated("race-b", 6))]);
    expect(answers.filter((a) => a.status === "fulfilled")).toHaveLength(1);
    const refused = answers.find((a) => a.status === "rejected");
    expect(await refusal(Promise.reject((refused as PromiseRejectedResult).reason))).toMatchObject({ code: "offer-refused", refusal: { code: "offer-over-standing" } });
    const me = (await lessor.account.account.me.query())!;
    expect((await owedTo(me.id)).owed).toBe(6);
    const won = answers.findIndex((a) => a.status === "fulfilled");
    await lessor.at(won === 0 ? first : second).worker.depart.mutate({ machineId: (answers[won] as PromiseFulfilledResult<{ machineId: string }>).value.machineId });
    await withDb(database.url, expectLedgerBalances);
  });
});

/** A plain run's report of a lease (the market trusts these producers: TRUST_ALL_PRODUCERS). */
function reportOf(machineId: string, l: { leaseId: string; taskId: string }) {
  const stdout = Buffer.from(`out ${l.taskId}`);
  return { machineId, leaseId: l.leaseId, exitCode: 0, elapsedMs: 5, stdout: stdout.toString("base64"), stderr: "", outputHash: createHash("sha256").update(stdout).digest("hex") };
}

/** A job of `tasks` tasks of a small program, submitted at `m` (which takes it). */
async function submitAt(consumer: ReturnType<typeof clientFor>, tasks: number, name: string) {
  const { jobId, decision } = await consumer.jobs.submit.mutate({
    name,
    source: { kind: "upload", moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: Array.from({ length: tasks }, () => ({ args: [], stdin: "" })), workPerTask: 0.02, memoryMbPerTask: 16 },
    benefit: { kind: "constant", value: 50 },
  });
  expect(decision.outcome).toBe("admitted");
  return jobId;
}

/** What the producer's account holds and how many of the job's results were paid, from PostgreSQL. */
const booksOf = (producerId: string, jobId: string) =>
  withDb(database.url, async (db) => {
    const account = await db.ledgerAccount.findFirst({ where: { kind: "producer", userId: producerId }, select: { balanceMicro: true } });
    const paid = await db.result.count({ where: { lease: { task: { jobId } }, paidMicro: { not: null } } });
    return { balance: account?.balanceMicro ?? 0n, paid };
  });

describe("a lease held at one manager, reported at another", () => {
  // A machine of manager-1's holds a lease of manager-1's job. The producer asks manager-2 for
  // work on it and reports the lease there, before and after manager-1 accepted it, hoping that
  // the manager which does not hold the lease pays it too.
  it("is refused at the manager that does not hold it, and paid once where it is held", async () => {
    const seller = await producer("cross-seller@example.test");
    const sellerId = (await seller.account.account.me.query())!.id;
    const { machineId } = await seller.at(first).worker.register.mutate({ ...hardware, name: "cross", kind: "opportunistic", slots: 2, pricePerSecond: 0.004 });
    const buyer = await signUp(first.url, "cross-buyer@example.test", ["consumer"], first.outbox);
    const jobId = await submitAt(buyer, 2, "cross");

    // manager-2 holds neither the machine nor the job: no work for it there.
    expect(await refusal(seller.at(second).worker.lease.mutate({ machineId, max: 2 }))).toMatchObject({ code: "machine-departed", machineId });
    const { leases } = await seller.at(first).worker.lease.mutate({ machineId, max: 2 });
    expect(leases.map((l) => l.jobId)).toEqual([jobId, jobId]);
    const [one, two] = leases as [(typeof leases)[0], (typeof leases)[0]];

    // A report at manager-2 of a lease manager-1 holds: refused, nothing paid, the task still leased.
    expect(await refusal(seller.at(second).worker.report.mutate(reportOf(machineId, one)))).toMatchObject({ code: "machine-departed", machineId });
    expect(await booksOf(sellerId, jobId)).toEqual({ balance: 0n, paid: 0 });

    // Reported where it is held, and then again at both: paid once.
    await seller.at(first).worker.report.mutate(reportOf(machineId, one));
    const once = await booksOf(sellerId, jobId);
    expect(once.paid).toBe(1);
    expect(once.balance).toBeGreaterThan(0n);
    await Promise.allSettled([seller.at(first).worker.report.mutate(reportOf(machineId, one)), seller.at(second).worker.report.mutate(reportOf(machineId, one))]);
    expect(await booksOf(sellerId, jobId)).toEqual(once);

    // The other lease, reported at both managers at the same moment: paid once, the job settled once.
    await Promise.allSettled([seller.at(first).worker.report.mutate(reportOf(machineId, two)), seller.at(second).worker.report.mutate(reportOf(machineId, two))]);
    await waitFor("the job to complete", async () => ((await buyer.jobs.get.query({ jobId })).status === "completed" ? true : undefined), 20_000);
    await withDb(database.url, (db) => expectMarketInvariants(db, [jobId]));
    expect((await booksOf(sellerId, jobId)).paid).toBe(2);
    await seller.at(first).worker.depart.mutate({ machineId });
  });
});

describe("one machine offered to both managers", () => {
  // The paper's subsets of producers may intersect: one machine is offered to both managers, each
  // holding a row of its own linked by the offer key. The attack: one run, on a lease of
  // manager-1's row, reported under the machine's other row as well, at either manager, to be paid
  // for it twice.
  it("is paid once for one run, under the row and at the manager that leased it", async () => {
    const seller = await producer("overlap-seller@example.test");
    const sellerId = (await seller.account.account.me.query())!.id;
    const offerKey = randomUUID();
    const rows = new Map<ManagerProcess, string>();
    for (const m of [first, second]) rows.set(m, (await seller.at(m).worker.register.mutate({ ...hardware, name: "shared", kind: "opportunistic", slots: 2, pricePerSecond: 0.004, offerKey })).machineId);
    const [one, two] = [rows.get(first)!, rows.get(second)!];
    expect(one).not.toBe(two);
    const buyer = await signUp(first.url, "overlap-buyer@example.test", ["consumer"], first.outbox);
    const jobId = await submitAt(buyer, 1, "one run");
    const { leases } = await seller.at(first).worker.lease.mutate({ machineId: one, max: 1 });
    expect(leases.map((l) => l.jobId)).toEqual([jobId]);
    const lease = leases[0]!;

    // Under the other row, at the manager that holds that row, and at the one that leased it.
    expect(await refusal(seller.at(second).worker.report.mutate(reportOf(two, lease)))).toMatchObject({ code: expect.stringMatching(/lease/) });
    expect(await refusal(seller.at(first).worker.report.mutate(reportOf(two, lease)))).toMatchObject({ code: "machine-departed" });
    expect(await booksOf(sellerId, jobId)).toEqual({ balance: 0n, paid: 0 });
    await seller.at(first).worker.report.mutate(reportOf(one, lease));
    const once = await booksOf(sellerId, jobId);
    expect(once.paid).toBe(1);
    await Promise.allSettled([seller.at(second).worker.report.mutate(reportOf(two, lease)), seller.at(first).worker.report.mutate(reportOf(one, lease))]);
    expect(await booksOf(sellerId, jobId)).toEqual(once);
    await waitFor("the job to complete", async () => ((await buyer.jobs.get.query({ jobId })).status === "completed" ? true : undefined), 20_000);
    await withDb(database.url, (db) => expectMarketInvariants(db, [jobId]));
    for (const [m, machineId] of rows) await seller.at(m).worker.depart.mutate({ machineId });
  });
});

describe("a job cancelled at the manager that does not hold it", () => {
  // The web app sends a consumer's calls to the first manager that answers, and a quote sends the
  // submission to the manager with the best offer: the job may be another manager's. A consumer
  // stopping it there must be able to, and be charged only what was paid for it (nothing yet),
  // whichever manager the call reaches; a cancel at both at once settles the job once.
  it("is stopped by its own manager, settled once, and its escrow comes back", async () => {
    const seller = await producer("cancel-seller@example.test");
    const { machineId } = await seller.at(first).worker.register.mutate({ ...hardware, name: "held", kind: "opportunistic", slots: 2, pricePerSecond: 0.004 });
    const buyer = await signUp(first.url, "cancel-buyer@example.test", ["consumer"], first.outbox);
    const balance = async () => (await buyer.ledger.statement.query()).consumerBalance;
    const before = await balance();
    const jobId = await submitAt(buyer, 2, "cancelled elsewhere");
    expect(await withDb(database.url, (db) => db.job.findUnique({ where: { id: jobId }, select: { managerId: true } }))).toEqual({ managerId: "manager-1" });
    const atSecond = await signIn(second.url, "cancel-buyer@example.test", "correct horse battery");
    const answers = await Promise.allSettled([atSecond.jobs.cancel.mutate({ jobId }), atSecond.jobs.cancel.mutate({ jobId })]);
    expect(answers.filter((a) => a.status === "fulfilled").map((a) => (a as PromiseFulfilledResult<unknown>).value)).toContainEqual({ cancelled: true, charged: 0 });
    expect((await buyer.jobs.get.query({ jobId })).status).toBe("cancelled");
    expect(await balance()).toBe(before);
    await withDb(database.url, async (db) => {
      expect(await db.ledgerEntry.count({ where: { jobId, kind: "settlement" } })).toBe(1);
      expect((await db.ledgerAccount.findFirst({ where: { kind: "escrow", jobId } }))?.balanceMicro ?? 0n).toBe(0n);
      await expectLedgerBalances(db);
    });
    await seller.at(first).worker.depart.mutate({ machineId });
  });
});

describe("a forger's standing at the other manager", () => {
  // An account caught forging is promised nothing in contracts (costbenefit contractCeiling). The
  // attack: its machine already works at manager-2, which read the account's standing when the
  // machine joined; manager-1 catches it forging (the fact its verification writes, written here
  // with the same statement), and it then offers a dedicated machine to manager-2, whose memory
  // still holds the account as it was.
  it("is read again from what every manager recorded before a contract is promised", async () => {
    const forger = await producer("forger@example.test");
    const forgerId = (await forger.account.account.me.query())!.id;
    const { machineId } = await forger.at(second).worker.register.mutate({ ...hardware, name: "cover", kind: "opportunistic", slots: 1, pricePerSecond: 0.004 });
    await withDb(database.url, (db) => runStatement(viaPrisma(db), addStandingFacts, { users: [forgerId], verified: [0], disagreements: [1], unconfirmedFailures: [0], expiredLeases: [0], forgeries: [1], now: Date.now() }));
    for (const m of [second, first]) {
      expect(await refusal(forger.at(m).worker.register.mutate(dedicated(`lease-at-${m.port}`, 2)))).toMatchObject({ code: "offer-refused", refusal: { code: "offer-over-standing", contractPrice: 2, ceiling: 0 } });
    }
    expect((await owedTo(forgerId)).owed).toBe(0);
    await forger.at(second).worker.depart.mutate({ machineId });
  });
});

describe("one balance, two managers admitting at once", () => {
  // Each manager decides its own admissions from its own memory. The attack: a consumer with 1,000
  // credits submits, at the same moment, a job to each manager whose escrow (its maxSpend of 600)
  // the balance covers alone, hoping both are held and run on credit it does not have.
  it("holds no more in escrow than the balance covers", async () => {
    const seller = await producer("escrow-seller@example.test");
    const machines = await Promise.all([first, second].map(async (m) => ({ m, ...(await seller.at(m).worker.register.mutate({ ...hardware, name: `escrow-${m.port}`, kind: "opportunistic", slots: 2, pricePerSecond: 0.004 })) })));
    const buyer = await signUp(first.url, "escrow-buyer@example.test", ["consumer"], first.outbox);
    const buyerThere = await signIn(second.url, "escrow-buyer@example.test", "correct horse battery");
    const balance = async () => (await buyer.ledger.statement.query()).consumerBalance;
    const before = await balance();
    expect(before).toBe(1000);
    const job = {
      name: "twice on credit",
      source: { kind: "upload" as const, moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: [{ args: [], stdin: "" }], workPerTask: 0.02, memoryMbPerTask: 16 },
      benefit: { kind: "constant" as const, value: 50 },
      maxSpend: 600,
    };
    const answers = await Promise.allSettled([buyer.jobs.submit.mutate(job), buyerThere.jobs.submit.mutate(job)]);
    const admitted = answers.flatMap((a) => (a.status === "fulfilled" && a.value.decision.outcome === "admitted" ? [a.value.jobId] : []));
    expect(admitted).toHaveLength(1);
    await withDb(database.url, async (db) => {
      const held = await db.ledgerAccount.findMany({ where: { kind: "escrow", jobId: { in: admitted } }, select: { balanceMicro: true } });
      expect(held.reduce((s, a) => s + a.balanceMicro, 0n)).toBe(600_000_000n);
      await expectLedgerBalances(db);
    });
    expect(await balance()).toBe(400);
    for (const jobId of admitted) await buyer.jobs.cancel.mutate({ jobId });
    expect(await balance()).toBe(before);
    for (const { m, machineId } of machines) await seller.at(m).worker.depart.mutate({ machineId });
  });
});

describe("a split job's price", () => {
  // A split job is quoted part by part, each part by its manager as if it were alone, and then
  // each part is admitted by its manager, which prices it against what that manager holds by
  // then. The consumer names the split: here two parts at one manager, so the second part is
  // admitted behind the first. The price the consumer is told for the whole, and the one its page
  // holds it to, must be what its parts were admitted at: the parts are charged up to that.
  it("is the sum of what its parts were admitted at", async () => {
    const seller = await producer("split-seller@example.test");
    const { machineId } = await seller.at(first).worker.register.mutate({ ...hardware, name: "split", kind: "opportunistic", slots: 1, pricePerSecond: 0.004 });
    const buyer = await signUp(first.url, "split-buyer@example.test", ["consumer"], first.outbox);
    const { jobId, decision } = await buyer.jobs.submit.mutate({
      name: "split twice at one manager",
      source: { kind: "upload", moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: Array.from({ length: 4 }, () => ({ args: [], stdin: "" })), workPerTask: 20, memoryMbPerTask: 16 },
      benefit: { kind: "constant", value: 50 },
      split: [
        { manager: "manager-1", fromTask: 0, tasks: 2 },
        { manager: "manager-1", fromTask: 2, tasks: 2 },
      ],
    });
    expect(decision.outcome).toBe("admitted");
    await withDb(database.url, async (db) => {
      const parts = await db.job.findMany({ where: { partOf: jobId }, select: { quotedPriceMicro: true, status: true } });
      expect(parts.map((p) => p.status)).toEqual(["admitted", "admitted"]);
      const admitted = parts.reduce((s, p) => s + p.quotedPriceMicro!, 0n);
      const whole = await db.job.findUniqueOrThrow({ where: { id: jobId }, select: { quotedPriceMicro: true } });
      expect({ told: decision.outcome === "admitted" ? Math.round(decision.price * 1e6) : null, page: whole.quotedPriceMicro }).toEqual({ told: Number(admitted), page: admitted });
    });
    await buyer.jobs.cancel.mutate({ jobId });
    await seller.at(first).worker.depart.mutate({ machineId });
  });
});

describe("a lease that lapses while its machine drains", () => {
  // An admin moves a busy machine: it drains, and is handed to the other manager once it holds no
  // lease. Its one lease lapses (the run is slow) while the run goes on. A run whose lease lapsed is
  // still paid when its result is the first accepted (docs/DESIGN.md "Settlement"), but only the
  // manager holding the machine hears it: handed at once, the honest run the drain interrupted was
  // refused at both managers and paid nothing. The machine stays until that result is in (or could
  // no longer come), then moves.
  it("waits for the late result, accepts and pays it once, then moves", async () => {
    const seller = await producer("drained-seller@example.test");
    const sellerId = (await seller.account.account.me.query())!.id;
    const { machineId } = await seller.at(first).worker.register.mutate({ ...hardware, name: "drained", kind: "opportunistic", slots: 1, pricePerSecond: 0.004, follow: true, manager: "manager-1" });
    const buyer = await signUp(first.url, "drained-buyer@example.test", ["consumer"], first.outbox);
    const jobId = await submitAt(buyer, 1, "drained");
    const { leases } = await seller.at(first).worker.lease.mutate({ machineId, max: 1 });
    expect(leases.map((l) => l.jobId)).toEqual([jobId]);
    const lease = leases[0]!;
    const moves = await admin.admin.moveMachines.mutate({ machineIds: [machineId], toManager: "manager-2" });
    expect(moves.moves).toMatchObject([{ machineId, state: "draining" }]);
    const holder = () => withDb(database.url, (db) => db.machine.findUniqueOrThrow({ where: { id: machineId }, select: { managerId: true, handedAt: true } }));
    // The worker is there throughout: it heartbeats wherever its machine is held.
    const beat = () => Promise.allSettled([first, second].map((m) => seller.at(m).worker.heartbeat.mutate({ machineId, leaseIds: [lease.leaseId] })));
    const lateBooks = () =>
      withDb(database.url, async (db) => {
        const results = await db.result.findMany({ where: { lease: { task: { jobId } }, accepted: true }, select: { heldMicro: true } });
        const account = await db.ledgerAccount.findFirst({ where: { kind: "producer", userId: sellerId }, select: { balanceMicro: true } });
        return { accepted: results.length, held: results.map((r) => (r.heldMicro === null ? null : String(r.heldMicro))), balance: account?.balanceMicro ?? 0n };
      });
    const status = () => withDb(database.url, (db) => db.lease.findUniqueOrThrow({ where: { id: lease.leaseId }, select: { status: true } }));
    await waitFor("the lease to lapse", async () => (await beat(), (await status()).status === "expired" ? true : undefined), 60_000, 1000);
    // A few stamps later it is still manager-1's, which still hears the run's late result.
    for (let i = 0; i < 3; i++) await (beat(), new Promise((r) => setTimeout(r, 1000)));
    expect((await holder()).managerId).toBe("manager-1");
    await seller.at(first).worker.report.mutate(reportOf(machineId, lease));
    // Accepted as the task's first result; its piece, held in the escrow for the job's lateness, is paid as the job settles.
    await waitFor("the job to complete", async () => ((await buyer.jobs.get.query({ jobId })).status === "completed" ? true : undefined), 20_000);
    const once = await lateBooks();
    expect(once).toMatchObject({ accepted: 1, held: [lease.pieceRateMicro] });
    expect(once.balance).toBe(BigInt(lease.pieceRateMicro!));

    // Its result in, it moves; the same report at either manager pays nothing more.
    await waitFor("the machine to be handed", async () => (await beat(), (await holder()).managerId === "manager-2" ? true : undefined), 30_000, 500);
    await waitFor("manager-2 to read the machine in", async () => (await beat(), (await holder()).handedAt === null ? true : undefined), 20_000, 500);
    await Promise.allSettled([seller.at(first).worker.report.mutate(reportOf(machineId, lease)), seller.at(second).worker.report.mutate(reportOf(machineId, lease))]);
    expect(await lateBooks()).toEqual(once);
    await withDb(database.url, async (db) => {
      expect(await db.ledgerEntry.count({ where: { jobId, kind: "settlement" } })).toBe(1);
      await expectLedgerBalances(db);
    });
    await seller.at(second).worker.depart.mutate({ machineId });
  }, 120_000);
});

describe("a consumer's queue quota", () => {
  // Each manager holds its own jobs in memory. The attack: a consumer at its quota of waiting
  // tasks at one manager names the other in its next submissions, to wait there as many again.
  it("counts the tasks waiting at every manager", async () => {
    const buyer = await signUp(first.url, "queue-buyer@example.test", ["consumer"], first.outbox);
    // Tasks no machine can hold (more memory than any slot), so they wait.
    const waiting = (tasks: number, manager: string) => ({
      name: `waits at ${manager}`,
      manager,
      source: { kind: "upload" as const, moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: Array.from({ length: tasks }, () => ({ args: [], stdin: "" })), workPerTask: 0.02, memoryMbPerTask: 4000 },
      benefit: { kind: "constant" as const, value: 50 },
    });
    const held = await buyer.jobs.submit.mutate(waiting(80, "manager-1"));
    expect(held.decision.outcome).toBe("delayed");
    expect(await refusal(buyer.jobs.submit.mutate(waiting(40, "manager-2")))).toMatchObject({ code: "limit-reached", limit: "queued-tasks-per-user", max: QUEUE_QUOTA, queued: 80, adding: 40 });
    // What is left of the quota may wait at the other manager.
    const rest = await buyer.jobs.submit.mutate(waiting(20, "manager-2"));
    expect(rest.decision.outcome).toBe("delayed");
    await withDb(database.url, async (db) => {
      const jobs = await db.job.findMany({ where: { id: { in: [held.jobId, rest.jobId] } }, select: { managerId: true, status: true } });
      expect(jobs.map((j) => `${j.managerId} ${j.status}`).sort()).toEqual(["manager-1 delayed", "manager-2 delayed"]);
    });
    for (const jobId of [held.jobId, rest.jobId]) await buyer.jobs.cancel.mutate({ jobId });
  });
});

describe("a dead manager's leases, reported at the manager that took it over", () => {
  // Last in the file: manager-1 is stopped here (SIGSTOP) and, taken over, stops itself.
  // manager-1 holds a machine and its job, whose two tasks are leased; one result is accepted and
  // paid there. manager-1 falls silent, and manager-2 takes over its machines and jobs. The
  // producer replays the paid report at manager-2, reports the other lease there, replays that
  // too, and, the moment manager-1 wakes (before it finds it was taken over), reports the same
  // lease to manager-1 as well: each run must be paid once, the job settled once.
  it("pays each run once, whichever manager hears it", async () => {
    const seller = await producer("takeover-seller@example.test");
    const sellerId = (await seller.account.account.me.query())!.id;
    const { machineId } = await seller.at(first).worker.register.mutate({ ...hardware, name: "taken", kind: "opportunistic", slots: 2, pricePerSecond: 0.004 });
    const buyer = await signUp(first.url, "takeover-buyer@example.test", ["consumer"], first.outbox);
    const jobId = await submitAt(buyer, 2, "taken over");
    const { leases } = await seller.at(first).worker.lease.mutate({ machineId, max: 2 });
    expect(leases.map((l) => l.jobId)).toEqual([jobId, jobId]);
    const [one, two] = leases as [(typeof leases)[0], (typeof leases)[0]];
    await seller.at(first).worker.report.mutate(reportOf(machineId, one));
    const paidOnce = await booksOf(sellerId, jobId);
    expect(paidOnce.paid).toBe(1);

    first.child.kill("SIGSTOP");
    await second.out.next(/took over the Market Manager manager-1/, 60_000);
    expect(await withDb(database.url, (db) => db.job.findUnique({ where: { id: jobId }, select: { managerId: true } }))).toEqual({ managerId: "manager-2" });

    // The paid run again, at the manager that took the job: nothing more.
    await Promise.allSettled([seller.at(second).worker.report.mutate(reportOf(machineId, one))]);
    expect(await booksOf(sellerId, jobId)).toEqual(paidOnce);
    // The other lease is still current at manager-2: accepted and paid there, once, however often it is sent.
    await seller.at(second).worker.report.mutate(reportOf(machineId, two));
    const paidTwice = await booksOf(sellerId, jobId);
    expect(paidTwice.paid).toBe(2);
    await Promise.allSettled([seller.at(second).worker.report.mutate(reportOf(machineId, two))]);

    // manager-1 wakes still holding both leases in memory; the same report reaches it at once.
    first.child.kill("SIGCONT");
    await Promise.allSettled([
      seller.at(first).worker.report.mutate(reportOf(machineId, two)),
      seller.at(first).worker.report.mutate(reportOf(machineId, one)),
    ]);
    // It finds it was taken over and stops (exit code 3), whatever it did meanwhile.
    await exit(first.child);
    expect(first.child.exitCode).toBe(3);

    const buyerThere = await signIn(second.url, "takeover-buyer@example.test", "correct horse battery");
    await waitFor("the job to complete at manager-2", async () => ((await buyerThere.jobs.get.query({ jobId })).status === "completed" ? true : undefined), 30_000);
    expect(await booksOf(sellerId, jobId)).toEqual(paidTwice);
    await withDb(database.url, (db) => expectMarketInvariants(db, [jobId]));
  }, 120_000);
});


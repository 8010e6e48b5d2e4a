import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PUBLIC_URL, clientFor, refusal, startTestMarket, verifyEmail, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { post } from "../../apps/market-manager/src/ledger/ledger.ts";

// What a consumer sees of their money before and after their first job: the starting credits
// from the moment they choose to buy, each job's name on its statement lines, and the escrow a
// job holds.

let market: TestMarket;
const STARTING = 1000;

beforeAll(async () => {
  market = await startTestMarket();
});
afterAll(() => market?.stop());

const grants = (userId: string) => market.manager.services.db.ledgerEntry.count({ where: { uniqueKey: `grant:${userId}` } });
const userId = async (email: string) => (await market.manager.services.db.user.findUniqueOrThrow({ where: { email } })).id;

/** A user as sign-up leaves them before they choose roles: the defaults (consumer and producer) are not a choice. */
async function signUpOnly(email: string) {
  const res = await fetch(`${market.url}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: PUBLIC_URL },
    body: JSON.stringify({ email, password: "correct horse battery", name: "early" }),
  });
  expect(res.ok).toBe(true);
  const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  return clientFor(market.url, { cookie, origin: PUBLIC_URL });
}

const pi = (name: string, taskCount: number, value: number) => ({
  name,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 1000 }, taskCount },
  benefit: { kind: "constant" as const, value },
});

/** A producer with one registered machine of one slot at 0.5 credits a second. */
async function producerMachine(email: string) {
  const producer = await market.signUp(email, ["producer"]);
  const worker = market.tokenClient((await producer.account.tokens.create.mutate({ name: "rack" })).token);
  const { machineId } = await worker.worker.register.mutate({
    name: email.split("@")[0]!, kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test",
  });
  return { producer, worker, machineId };
}

describe("starting credits", () => {
  it("are on the statement as soon as a consumer signs up, before any job", async () => {
    const consumer = await market.signUp("new@example.test", ["consumer"]);
    const { consumerBalance, lines } = await consumer.ledger.statement.query();
    expect(consumerBalance).toBe(STARTING);
    expect(lines).toEqual([expect.objectContaining({ kind: "grant", account: "consumer", amount: STARTING })]);

    // Choosing roles again, reading again and submitting a job never grant twice.
    await consumer.account.chooseRoles.mutate({ roles: ["consumer", "producer"] });
    await consumer.ledger.statement.query();
    const { jobId } = await consumer.jobs.submit.mutate(pi("first", 1, 5));
    await consumer.jobs.cancel.mutate({ jobId }); // delayed (no machines): it holds nothing
    expect(await grants(await userId("new@example.test"))).toBe(1);
    expect((await consumer.ledger.statement.query()).lines.filter((l) => l.kind === "grant")).toHaveLength(1);
    await expectLedgerBalances(market.manager.services.db);
  });

  it("are not given to a producer who does not buy, until they add the consumer role", async () => {
    const producer = await market.signUp("seller@example.test", ["producer"]);
    expect((await producer.ledger.statement.query()).lines).toEqual([]);
    expect(await grants(await userId("seller@example.test"))).toBe(0);
    await producer.account.chooseRoles.mutate({ roles: ["producer", "consumer"] });
    expect((await producer.ledger.statement.query()).consumerBalance).toBe(STARTING);
    expect(await grants(await userId("seller@example.test"))).toBe(1);
  });

  it("are given only once the address is verified and the consumer role chosen, and exactly once however many looks at once", async () => {
    const early = await signUpOnly("early@example.test");
    const id = await userId("early@example.test");
    expect((await early.ledger.statement.query()).consumerBalance).toBe(0); // an unverified address gets nothing
    expect(await grants(id)).toBe(0);
    await verifyEmail(market.url, market.outbox, "early@example.test");
    // Verified, with the roles sign-up gave: not a choice, so nothing yet, however often it looks.
    for (let i = 0; i < 3; i++) expect((await early.ledger.statement.query()).consumerBalance).toBe(0);
    expect(await grants(id)).toBe(0);
    await Promise.all([early.account.chooseRoles.mutate({ roles: ["consumer"] }), ...Array.from({ length: 6 }, () => early.ledger.statement.query())]);
    const looks = await Promise.all(Array.from({ length: 6 }, () => early.ledger.statement.query()));
    for (const s of looks) expect(s.consumerBalance).toBe(STARTING);
    expect(await grants(id)).toBe(1);
    await expectLedgerBalances(market.manager.services.db);
  });

  it("are not given to an account that confirms its address and then chooses to produce only", async () => {
    const seller = await signUpOnly("only-sells@example.test");
    await verifyEmail(market.url, market.outbox, "only-sells@example.test");
    await seller.account.chooseRoles.mutate({ roles: ["producer"] });
    expect((await seller.ledger.statement.query()).lines).toEqual([]);
    expect(await grants(await userId("only-sells@example.test"))).toBe(0);
  });

  it("refuses an empty role choice and changes nothing", async () => {
    const early = await signUpOnly("undecided@example.test");
    expect((await refusal(early.account.chooseRoles.mutate({ roles: [] }))).code).toBe("invalid-input");
    expect(await grants(await userId("undecided@example.test"))).toBe(0);
  });
});

describe("money views of a job", () => {
  it("jobs.get returns the escrow held now, and each statement line names its job", async () => {
    const consumer = await market.signUp("named@example.test", ["consumer"]);
    const { worker, machineId } = await producerMachine("rack@example.test");
    const { jobId, decision } = await consumer.jobs.submit.mutate(pi("Tuesday's pi", 2, 40));
    expect(decision.outcome).toBe("admitted");
    // Posted pricing: the escrow is what the job can be charged, its price, never the whole benefit of 40.
    const escrow = (await consumer.jobs.get.query({ jobId })).escrowHeld;
    expect(escrow).toBeCloseTo(decision.outcome === "admitted" ? decision.price : Infinity, 6);
    expect(escrow).toBeLessThan(40);
    const held = await consumer.ledger.statement.query();
    expect(held.inEscrow).toBe(escrow);
    // What the pages' headers poll: the same balances, without the lines.
    expect(await consumer.ledger.balance.query()).toEqual({ consumerBalance: held.consumerBalance, producerBalance: held.producerBalance, inEscrow: escrow });
    expect(held.consumerBalance).toBe(STARTING - escrow);
    expect(held.lines.find((l) => l.kind === "escrow")).toMatchObject({ jobId, jobName: "Tuesday's pi", amount: -escrow });
    expect(held.lines.find((l) => l.kind === "grant")).toMatchObject({ jobId: null, jobName: null });

    await consumer.jobs.cancel.mutate({ jobId });
    expect((await consumer.jobs.get.query({ jobId })).escrowHeld).toBe(0);
    const after = await consumer.ledger.statement.query();
    expect(after.inEscrow).toBe(0);
    expect(await consumer.ledger.balance.query()).toEqual({ consumerBalance: STARTING, producerBalance: 0, inEscrow: 0 });
    expect(after.lines.find((l) => l.kind === "settlement")).toMatchObject({ jobId, jobName: "Tuesday's pi", amount: escrow });
    await worker.worker.depart.mutate({ machineId });
    await expectLedgerBalances(market.manager.services.db);
  });

  it("does not show a producer the name of someone else's job it was paid for", async () => {
    const consumer = await market.signUp("private@example.test", ["consumer"]);
    const { producer, worker, machineId } = await producerMachine("paid@example.test");
    const { jobId } = await consumer.jobs.submit.mutate(pi("secret project", 1, 10));
    const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
    const stdout = Buffer.from("7 10\n");
    const { createHash } = await import("node:crypto");
    await worker.worker.report.mutate({
      machineId, leaseId: lease!.leaseId, exitCode: 0, stdout: stdout.toString("base64"), stderr: "",
      outputHash: createHash("sha256").update(stdout).digest("hex"), elapsedMs: 1000,
    });
    const payment = (await producer.ledger.statement.query()).lines.find((l) => l.kind === "payment");
    // The lease's piece rate, whatever the run's reported second.
    expect(payment).toMatchObject({ jobId, jobName: null, amount: Number(lease!.pieceRateMicro) / 1e6 });
    expect((await consumer.ledger.statement.query()).lines.find((l) => l.kind === "settlement")).toMatchObject({ jobName: "secret project" });
    await worker.worker.depart.mutate({ machineId });
  });
});

describe("a statement", () => {
  it("lists the newest 200 movements of both of a user's accounts, newest first, however many they had", async () => {
    const user = await market.signUp("busy@example.test", ["consumer", "producer"]);
    const id = await userId("busy@example.test");
    const db = market.manager.services.db;
    // 260 movements alternating between the two accounts, each in its own transaction, as a
    // producer paid for its runs while it buys: more than a statement shows.
    for (let i = 0; i < 260; i++) {
      const account = i % 2 === 0 ? ({ kind: "consumer", userId: id } as const) : ({ kind: "producer", userId: id } as const);
      await db.$transaction((tx) => post(tx, { id: randomUUID(), kind: "payment", uniqueKey: `statement-test:${i}`, jobId: null, taskId: null, memo: { i }, postings: [{ account: { kind: "market" }, amount: -1n }, { account, amount: 1n }] }));
    }
    const { lines } = await user.ledger.statement.query();
    expect(lines).toHaveLength(200);
    // The same lines as all of the user's postings ordered by their entries' time.
    const all = await db.ledgerPosting.findMany({
      where: { account: { userId: id, kind: { in: ["consumer", "producer"] } } },
      include: { entry: true },
      orderBy: [{ entry: { createdAt: "desc" } }, { id: "desc" }],
    });
    expect(all.length).toBe(261); // and the starting credits
    expect(lines.map((l) => l.memo)).toEqual(all.slice(0, 200).map((p) => p.entry.memo));
    expect(lines.map((l) => l.at)).toEqual([...lines.map((l) => l.at)].sort((a, b) => b - a));
    expect(new Set(lines.map((l) => l.account))).toEqual(new Set(["consumer", "producer"]));
    expect((lines[0]!.memo as { i: number }).i).toBe(259);
    await expectLedgerBalances(db);
  });
});

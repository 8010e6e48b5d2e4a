import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";

// The market decides while its statements are written (market/journal.ts): its lock is held for
// memory only, so a statement that waits on the database holds up the statements behind it, and
// nobody's quote, heartbeat or page. Everything written is still written before anyone is told.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
let patient: Client;
let other: Client;
let worker: ReturnType<TestMarket["tokenClient"]>;
let machineId: string;

const db = () => market.manager.services.db;
const job = (name: string) => ({
  name,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 1000 }, taskCount: 2 },
  benefit: { kind: "constant" as const, value: 40 },
});
const output = (text: string) => ({ exitCode: 0, stdout: Buffer.from(text).toString("base64"), stderr: "", outputHash: createHash("sha256").update(text).digest("hex") });

beforeAll(async () => {
  market = await startTestMarket({ LEASE_TIMEOUT_MS: "600000" });
  patient = await market.signUp("patient@example.test", ["consumer"]);
  other = await market.signUp("other@example.test", ["consumer"]);
  ({ worker } = await market.signUpProducer("rack@example.test"));
  ({ machineId } = await worker.worker.register.mutate({ name: "rack", kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test" }));
});
afterAll(() => market?.stop());

/** Holds the consumer's ledger account in a transaction of the test's own, as a slow database would: their admission's debit waits for it. */
async function holdAccount(email: string) {
  const user = await db().user.findUniqueOrThrow({ where: { email } });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const done = db().$transaction(
    async (tx) => {
      await tx.$queryRaw`SELECT 1 FROM "LedgerAccount" WHERE kind = 'consumer'::"AccountKind" AND "userId" = ${user.id} FOR UPDATE`;
      locked();
      await released;
    },
    { timeout: 60_000 },
  );
  await isLocked;
  return async () => {
    release();
    await done;
  };
}

describe("a statement that waits on the database", () => {
  it("holds up no one's quote, heartbeat or job page, and its job is answered once written", async () => {
    const { jobId: earlier } = await other.jobs.submit.mutate(job("earlier"));
    const release = await holdAccount("patient@example.test");
    let answered = false;
    const submitted = patient.jobs.submit.mutate(job("waits")).finally(() => (answered = true));
    try {
      // Its decision is made and its statement waits: the market answers everyone else meanwhile.
      await new Promise((r) => setTimeout(r, 300));
      const started = performance.now();
      const quote = await other.jobs.quote.mutate(job("a quote"));
      expect(quote.outcome).toBe("admitted");
      await worker.worker.heartbeat.mutate({ machineId, leaseIds: [] });
      expect((await other.jobs.get.query({ jobId: earlier })).status).toBe("admitted");
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(answered).toBe(false);
    } finally {
      await release();
    }
    const { jobId, decision } = await submitted;
    expect(decision.outcome).toBe("admitted");
    expect((await patient.jobs.get.query({ jobId })).escrowHeld).toBeGreaterThan(0);

    // Both jobs run to the end on the machine, leased and reported as any other.
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 8 });
    expect(new Set(leases.map((l) => l.jobId))).toEqual(new Set([earlier, jobId]));
    const { answers } = await worker.worker.reportMany.mutate({ reports: leases.map((l) => ({ machineId, leaseId: l.leaseId, elapsedMs: 5, ...output("3.14 1000\n") })) });
    expect(answers.every((a) => a.accepted)).toBe(true);
    for (const id of [earlier, jobId]) expect((await patient.jobs.get.query({ jobId: id }).catch(() => other.jobs.get.query({ jobId: id }))).status).toBe("completed");
    await expectLedgerBalances(db());
  });
});

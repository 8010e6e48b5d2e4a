import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { DEFAULT_TERMS } from "@cyclemarket/costbenefit";
import { CAT_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { allowRefusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { runLease, type TestLease } from "../support/worker.ts";
import { giveStanding } from "../support/standing.ts";

// A failed run is paid only when a machine of another owner fails the same way: then the task has
// failed for good, both runs are paid from the escrow, and a job stops after three such tasks.
// In an open market accounts cost nothing, and a result from accounts without standing is never
// accepted without one that has it. The attack: two fresh accounts, one person behind one
// address, take a victim's tasks and report the same trap for each without running anything.
// A failure is now confirmed only with an account with standing among the two, and after a failure
// only accounts without standing reported, the next run goes to one that has it.

let market: TestMarket;
type Worker = ReturnType<TestMarket["tokenClient"]>;

beforeAll(async () => {
  market = await startTestMarket({ TRUST_ALL_PRODUCERS: "0" });
  market.manager.services.market.settings.terms = { ...DEFAULT_TERMS, leaseFloorSeconds: 1 };
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const trap = { exitCode: -1, elapsedMs: 5, stdout: "", stderr: "", outputHash: createHash("sha256").update(Buffer.alloc(0)).digest("hex"), error: { code: "trap" as const, message: "unreachable" } };

async function sybil(name: string, standing = false) {
  const email = `${name}@${name}.test`;
  const client = await market.signUp(email, ["producer"]);
  if (standing) await giveStanding(db(), email);
  const worker: Worker = market.tokenClient((await client.account.tokens.create.mutate({ name })).token);
  const { machineId } = await worker.worker.register.mutate({ name, kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 1, userAgent: "test" });
  return { client, worker, machineId };
}

describe("two fresh accounts reporting the same invented failure", () => {
  it("are paid nothing, fail no task, and the victim's job completes once an account with standing runs it", async () => {
    const victim = await market.signUp("failed-victim@failed-victim.test", ["consumer"]);
    const sybils = [await sybil("fail-a"), await sybil("fail-b")];
    try {
      const { jobId, decision } = await victim.jobs.submit.mutate({
        name: "victim",
        source: { kind: "upload", moduleBase64: Buffer.from(wat(CAT_WAT)).toString("base64"), tasks: Array.from({ length: 4 }, (_, i) => ({ args: [], stdin: Buffer.from(`line ${i}`).toString("base64") })), workPerTask: 1, memoryMbPerTask: 16 },
        benefit: { kind: "constant", value: 50 },
      });
      expect(decision.outcome).toBe("admitted");
      const price = decision.outcome === "admitted" ? decision.price! : NaN;
      for (let round = 0; round < 10; round++) {
        const status = (await victim.jobs.get.query({ jobId })).status;
        if (status !== "admitted" && status !== "running") break;
        for (const s of sybils) {
          const { leases } = await s.worker.worker.lease.mutate({ machineId: s.machineId, max: 4 });
          for (const l of leases) await allowRefusal(s.worker.worker.report.mutate({ machineId: s.machineId, leaseId: l.leaseId, ...trap }));
        }
        await sleep(200);
      }
      const during = await victim.jobs.get.query({ jobId });
      expect({ status: during.status, confirmed: during.failures.tasks.reduce((n, t) => n + t.confirmed, 0) }).toEqual({ status: "running", confirmed: 0 });
      // Producers with standing join (two: a run an account with standing reports is spot-checked
      // now and then on a machine of another): the tasks the accounts failed run there, and the
      // job completes.
      const honest = [await sybil("fail-honest", true), await sybil("fail-honest-2", true)];
      sybils.push(...honest);
      // Until done: the tasks move to them as the market's sweeper places them again, about once a second.
      for (const until = Date.now() + 30_000; Date.now() < until && (await victim.jobs.get.query({ jobId })).status !== "completed"; ) {
        for (const h of honest) {
          for (const l of (await h.worker.worker.lease.mutate({ machineId: h.machineId, max: 4 })).leases) {
            await h.worker.worker.report.mutate(await runLease(h.worker, h.machineId, l as TestLease));
          }
        }
        await sleep(150);
      }
      const job = await victim.jobs.get.query({ jobId });
      const earned = await Promise.all(sybils.slice(0, 2).map(async (s) => (await s.client.ledger.statement.query()).producerBalance));
      // Before, the two accounts' failures confirmed each other: each task they failed was paid
      // twice from the victim's escrow, and the job stopped after three, they having run nothing.
      expect({ status: job.status, earned, charged: job.charged, confirmed: job.failures.tasks.reduce((n, t) => n + t.confirmed, 0) }).toEqual({
        status: "completed",
        earned: [0, 0],
        charged: expect.closeTo(price, 6),
        confirmed: 0,
      });
    } finally {
      for (const s of sybils) await s.worker.worker.depart.mutate({ machineId: s.machineId });
    }
    await expectLedgerBalances(db());
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAT_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances, marketMicro } from "../support/books.ts";
import { runLease, type TestLease } from "../support/worker.ts";
import { giveStanding } from "../support/standing.ts";

// Copies the market adds to verify a result (a fresh account's, a spot check, a tie-break). The
// attack, by one person with three accounts in an open market: a consumer, a fresh producer asking
// next to nothing (its machine wins the placement, so the quote is tiny), and a producer with
// standing asking a great deal. Every result of the fresh account must be run again on a machine
// of an account with standing; when the person's is the only one free to run it (a thin market, or
// a job whose memory only their machines offer), a market paying checks at the checker's ask pays
// them about 400 credits on a quote of 0.024. A check is paid within its task's share of the quote
// (costbenefit copyPieces), so the person gets back at most what they paid.

const RESERVE = 100_000;
let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
type Worker = ReturnType<TestMarket["tokenClient"]>;
interface Producer {
  client: Client;
  worker: Worker;
  machineId: string;
}

beforeAll(async () => {
  market = await startTestMarket({ TRUST_ALL_PRODUCERS: "0", MARKET_RESERVE: String(RESERVE) });
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const marketBalance = async () => Number(await marketMicro(db())) / 1e6;

async function producer(name: string, pricePerSecond: number, standing: boolean): Promise<Producer> {
  const email = `${name}@${name}.test`;
  const client = await market.signUp(email, ["producer"]);
  if (standing) await giveStanding(db(), email);
  const worker = market.tokenClient((await client.account.tokens.create.mutate({ name })).token);
  const { machineId } = await worker.worker.register.mutate({ name, kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond, userAgent: "test" });
  return { client, worker, machineId };
}

async function holdings(c: Client) {
  const s = await c.ledger.statement.query();
  return s.consumerBalance + s.producerBalance + s.inEscrow;
}

async function runWhatIsLeased(p: Producer, jobId: string) {
  const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 8 });
  for (const l of leases.filter((x) => x.jobId === jobId)) await p.worker.worker.report.mutate(await runLease(p.worker, p.machineId, l as TestLease));
  return leases.length;
}

describe("one person's fresh producer and producer with standing", () => {
  it("cannot have the market pay the verification copies of their own job at any price", async () => {
    const buyer = await market.signUp("farm-buyer@farm-buyer.test", ["consumer"]);
    // The fresh account asks the least one may; the one with standing 100 credits a second.
    const fresh = await producer("farm-fresh", 0.000001, false);
    const verifier = await producer("farm-standing", 100, true);
    const before = (await holdings(buyer)) + (await holdings(fresh.client)) + (await holdings(verifier.client));
    const marketBefore = await marketBalance();
    try {
      const { jobId, decision } = await buyer.jobs.submit.mutate({
        name: "farm",
        source: {
          kind: "upload",
          moduleBase64: Buffer.from(wat(CAT_WAT)).toString("base64"),
          tasks: Array.from({ length: 4 }, (_, i) => ({ args: [], stdin: Buffer.from(`line ${i}`).toString("base64") })),
          workPerTask: 1,
          memoryMbPerTask: 16,
        },
        benefit: { kind: "constant", value: 100 },
      });
      expect(decision.outcome).toBe("admitted");
      for (let round = 0; round < 30 && (await buyer.jobs.get.query({ jobId })).status !== "completed"; round++) {
        await runWhatIsLeased(fresh, jobId);
        await runWhatIsLeased(verifier, jobId);
        await sleep(150);
      }
      const job = await buyer.jobs.get.query({ jobId });
      expect(job.status).toBe("completed");
      const after = (await holdings(buyer)) + (await holdings(fresh.client)) + (await holdings(verifier.client));
      // Honest play of the same job leaves the person the quote poorer, less the pieces their own
      // machines earn, and the market keeps its fee.
      expect(after - before, "what the person's accounts gained").toBeLessThanOrEqual(1e-6);
      expect((await marketBalance()) - marketBefore, "what the market's account gained").toBeGreaterThanOrEqual(-1e-6);
    } finally {
      for (const p of [fresh, verifier]) await p.worker.worker.depart.mutate({ machineId: p.machineId });
    }
    await expectLedgerBalances(db());
  });
});

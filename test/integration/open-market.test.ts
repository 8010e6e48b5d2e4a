import { afterAll, beforeAll, expect, it } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodePool } from "../../apps/worker-runtime/src/node/pool.ts";
import { createTrpcApi } from "../../apps/worker-runtime/src/node/trpc-api.ts";
import { runProducer } from "../../apps/worker-runtime/src/producer.ts";
import { signUp, startTestMarket, type TestMarket } from "../support/market.ts";
import { waitFor } from "../support/processes.ts";

// The market as `npm start` runs it: open (standing is earned), with the launcher's local worker,
// whose account is the market's own and has standing from the start. A newcomer who produces from
// a fresh, unconfirmed account has every result checked by a machine with standing: the job still
// completes with the right outputs, and the newcomer is paid for the results that agreed.

let market: TestMarket;
const pool = createNodePool({ slots: 2 });
const running: { stop: AbortController; done: Promise<unknown> }[] = [];
const base = { kind: "opportunistic" as const, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, userAgent: "test" };

function worker(token: string, name: string, pricePerSecond: number) {
  const stop = new AbortController();
  const done = runProducer({
    api: createTrpcApi(market.url, token),
    executor: pool,
    machine: { ...base, name, pricePerSecond },
    slots: 1,
    signal: stop.signal,
    idleBackoff: { minMs: 100, maxMs: 500 },
  });
  running.push({ stop, done });
}

beforeAll(async () => {
  const tokenFile = join(mkdtempSync(join(tmpdir(), "cyclemarket-local-worker-")), "token");
  market = await startTestMarket({ TRUST_ALL_PRODUCERS: "0", LOCAL_WORKER_TOKEN_FILE: tokenFile });
  worker(readFileSync(tokenFile, "utf8").trim(), "local worker", 0.001);
});
afterAll(async () => {
  for (const r of running) r.stop.abort();
  await Promise.allSettled(running.map((r) => r.done));
  await pool.close();
  await market?.stop();
});

it("a newcomer's results are checked by a machine with standing, the job completes, and the newcomer is paid for what agreed", async () => {
  const newcomer = await signUp(market.url, "newcomer@example.test", ["producer"]);
  expect(await newcomer.machines.standing.query()).toMatchObject({ has: false, confirmed: false, steps: expect.arrayContaining([{ code: "confirm-email" }]) });
  // Cheaper than the local worker, so the market gives it work first.
  worker((await newcomer.account.tokens.create.mutate({ name: "laptop" })).token, "newcomer's laptop", 0.0001);
  const live = market.manager.services.market.state;
  await waitFor("both machines to join", async () => ([...live.machines.values()].length === 2 || undefined), 10_000);

  const consumer = await market.signUp("buyer@example.test", ["consumer"]);
  const { jobId, decision } = await consumer.jobs.submit.mutate({
    name: "pi in an open market",
    source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 2_000_000 }, taskCount: 6 },
    benefit: { kind: "constant", value: 50 },
  });
  expect(decision.outcome).toBe("admitted");
  const job = await waitFor(
    "the job to complete",
    async () => {
      const j = await consumer.jobs.get.query({ jobId });
      if (j.status === "failed") throw new Error("the job failed");
      return j.status === "completed" ? j : undefined;
    },
    60_000,
  );
  expect(job.tasksDone).toBe(6);
  const outputs = await consumer.jobs.outputs.query({ jobId });
  expect(outputs).toHaveLength(6);

  // Whatever the newcomer ran was run again by the local worker; what agreed counted for it.
  const db = market.manager.services.db;
  const user = await db.user.findUniqueOrThrow({ where: { email: "newcomer@example.test" }, select: { id: true, standing: true } });
  const ran = await db.result.count({ where: { lease: { task: { jobId }, machine: { ownerId: user.id } } } });
  expect(ran).toBeGreaterThan(0);
  expect(user.standing?.verified).toBe(ran);
  expect((await newcomer.ledger.statement.query()).producerBalance).toBeGreaterThan(0);
  // The checks were paid from the job's escrow, within the quote: the market's account paid none
  // of the job's runs, so its profit on the job is not negative.
  const fromMarket = await db.ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { jobId, kind: "payment" }, account: { kind: "market" } } });
  expect(fromMarket._sum.amountMicro ?? 0n).toBe(0n);
  expect((await db.ledgerAccount.aggregate({ _sum: { balanceMicro: true } }))._sum.balanceMicro).toBe(0n);
});

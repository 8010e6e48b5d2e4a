import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { marketWithMachine, runLease } from "../support/worker.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";

// Reports cannot mislead the market about a job's work or a machine's speed: a run measures the
// work by the market's own clock (lowered, never raised, by what the producer says), one owner's
// runs alone never replace the consumer's estimate, and no claim raises a machine's speed.

let market: TestMarket;
let consumer: Awaited<ReturnType<typeof marketWithMachine>>["consumer"];
let worker: Awaited<ReturnType<typeof marketWithMachine>>["worker"];
let machineId: string;

beforeAll(async () => {
  market = await startTestMarket();
  ({ consumer, worker, machineId } = await marketWithMachine(market, 0.65));
});
afterAll(() => market?.stop());

describe("a wrong work estimate", () => {
  it("measures runs by the market's clock, lets no single owner move the job's work, and leaves the machine's speed alone", async () => {
    // Each run is reported as taking 2 s on a 0.65 machine; the market sees it answered at once.
    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "underestimated",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount: 4 },
      benefit: { kind: "constant", value: 100 },
    });
    expect(decision.outcome).toBe("admitted");
    const db = market.manager.services.db;
    const declared = (await db.job.findUniqueOrThrow({ where: { id: jobId } })).workPerTask;

    for (let round = 0; round < 2; round++) {
      const { leases } = await worker.worker.lease.mutate({ machineId, max: 2 });
      for (const lease of leases) {
        const report = await worker.worker.report.mutate(await runLease(worker, machineId, lease, 2000));
        expect(report.accepted).toBe(true);
      }
    }

    const job = await db.job.findUniqueOrThrow({ where: { id: jobId } });
    expect(job.status).toBe("completed");
    // Four samples, each at most what the market's clock saw between lease and report (far below 2 s).
    const samples = job.workSamples as { owner: string; work: number }[];
    expect(samples).toHaveLength(4);
    for (const s of samples) expect(s.work).toBeLessThan(2 * 0.65);
    // One owner measured it: the leases kept the declared work.
    expect(job.workPerTask).toBe(declared);
    expect(job.declaredWorkPerTask).toBe(declared);
    // The machine keeps the speed its benchmark gave, in the database and in the live market.
    expect((await db.machine.findUniqueOrThrow({ where: { id: machineId } })).speed).toBe(0.65);
    expect(market.manager.services.market.state.machines.get(machineId)?.speed).toBe(0.65);
  });
});

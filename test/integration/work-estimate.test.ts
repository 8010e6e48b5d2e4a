import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { marketWithMachine, runLease } from "../support/worker.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";

// A consumer's work estimate cannot mislead the market about a machine: runs that take far longer
// than the job said move that job's own estimate, never the speed of the machine that ran them.

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
  it("moves the job's estimate toward the measured runs and leaves the machine's benchmarked speed alone", async () => {
    // The example says its tasks are tiny; each run is reported as taking 2 s on a 0.65 machine.
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
    expect(job.workPerTask).toBeGreaterThan(declared * 2);
    expect(job.declaredWorkPerTask).toBe(declared);
    // The machine keeps the speed its benchmark gave, in the database and in the live market.
    expect((await db.machine.findUniqueOrThrow({ where: { id: machineId } })).speed).toBe(0.65);
    expect(market.manager.services.market.state.machines.get(machineId)?.speed).toBe(0.65);
  });
});

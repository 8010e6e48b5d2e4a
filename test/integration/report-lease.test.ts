import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { marketWithMachine, runLease } from "../support/worker.ts";

// A busy worker makes one request per cycle: its report call asks for the next tasks, which the
// market leases once the reports are in, in the same group commit, over real HTTP and PostgreSQL.

let market: TestMarket;
let consumer: Awaited<ReturnType<typeof marketWithMachine>>["consumer"];
let worker: Awaited<ReturnType<typeof marketWithMachine>>["worker"];
let machineId: string;

beforeAll(async () => {
  market = await startTestMarket();
  ({ consumer, worker, machineId } = await marketWithMachine(market));
});
afterAll(() => market?.stop());

describe("reports that ask for the next tasks", () => {
  it("hand out the next leases in the same answer, until the job is done and paid", async () => {
    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "pi",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 10_000 }, taskCount: 5 },
      benefit: { kind: "constant", value: 100 },
    });
    expect(decision.outcome).toBe("admitted");

    let leases = (await worker.worker.lease.mutate({ machineId, max: 2 })).leases;
    expect(leases).toHaveLength(2);
    const seen = new Set(leases.map((l) => l.taskId));
    // Two results and two more tasks per call: 2 + 2 + 1 tasks in three calls.
    const many = await worker.worker.reportMany.mutate({ reports: await Promise.all(leases.map((l) => runLease(worker, machineId, l))), lease: { machineId, max: 2 } });
    expect(many.answers.map((a) => a.accepted)).toEqual([true, true]);
    leases = many.leases ?? [];
    expect(leases).toHaveLength(2);
    for (const l of leases) expect(seen.has(l.taskId)).toBe(false);
    leases.forEach((l) => seen.add(l.taskId));

    // The single report asks too, for the last task.
    const one = await worker.worker.report.mutate({ ...(await runLease(worker, machineId, leases[0]!)), lease: { machineId, max: 1 } });
    expect(one.accepted).toBe(true);
    expect(one.leases).toHaveLength(1);
    expect(seen.has(one.leases![0]!.taskId)).toBe(false);

    // Nothing left to lease: the answer says so, and the job completes with every task paid once.
    const last = await worker.worker.reportMany.mutate({
      reports: [await runLease(worker, machineId, leases[1]!), await runLease(worker, machineId, one.leases![0]!)],
      lease: { machineId, max: 2 },
    });
    expect(last.answers.map((a) => a.accepted)).toEqual([true, true]);
    expect(last.leases).toEqual([]);
    const job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    expect(job.tasksDone).toBe(5);
  });

  it("answers the reports even when the lease asked for cannot be made", async () => {
    const { decision } = await consumer.jobs.submit.mutate({
      name: "pi",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 10_000 }, taskCount: 1 },
      benefit: { kind: "constant", value: 100 },
    });
    expect(decision.outcome).toBe("admitted");
    const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
    // A lease for a machine that is not this producer's is refused; the report still counts.
    const answer = await worker.worker.reportMany.mutate({ reports: [await runLease(worker, machineId, lease!)], lease: { machineId: "no-such-machine", max: 1 } });
    expect(answer.answers).toEqual([{ accepted: true }]);
    expect(answer.leases).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { expectLedgerBalances } from "../support/books.ts";
import { catJob, runLease, type TestLease } from "../support/worker.ts";
import { openMarket, type Producer } from "../support/one-person.ts";

// The attack, by one producer against a consumer it does not know: its machine asks least, so the
// engine places the consumer's task on it; it leases the task and reports that its own sandbox
// crashed (a worker's trouble, never the program's), and the task comes back to the same machine,
// still the cheapest, until three failed runs give it up and the job fails. Only failures that can
// be the program's sent the next run to another owner, so one machine could fail any job it was
// placed on, with an honest producer idle beside it. Observed: a one-task job failed after three
// reported crashes while a machine of another owner with standing asked for work every round.
//
// Every failure now sends the task's next run to a machine of another owner when one is connected
// (market/replicas.ts mayNotRun), and after failures only accounts without standing reported, to
// one with standing: the honest machine runs it and the job completes.

const { market, db, producer } = openMarket();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const EMPTY_HASH = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

async function crash(p: Producer, jobId: string) {
  const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 4 });
  for (const l of leases.filter((x) => x.jobId === jobId)) {
    await p.worker.worker.report.mutate({ machineId: p.machineId, leaseId: l.leaseId, exitCode: 1, stdout: "", stderr: "", outputHash: EMPTY_HASH, elapsedMs: 5, error: { code: "crashed", message: "the sandbox crashed" } });
  }
}

async function honest(p: Producer, jobId: string) {
  const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 4 });
  for (const l of leases.filter((x) => x.jobId === jobId)) await p.worker.worker.report.mutate(await runLease(p.worker, p.machineId, l as TestLease));
}

describe("a producer reporting its sandbox crashed on every run of a stranger's task", () => {
  for (const standing of [true, false]) {
    it(`cannot fail the job while another owner's machine is there to run it (${standing ? "with" : "without"} standing)`, async () => {
      const tag = standing ? "cr-s" : "cr-f";
      const victim = await market().signUp(`${tag}-victim@${tag}-victim.test`, ["consumer"]);
      const crasher = await producer(`${tag}-crasher`, 0.01, standing);
      const fair = await producer(`${tag}-fair`, 0.5, true);
      try {
        const { jobId, decision } = await victim.jobs.submit.mutate(catJob(1, { value: 100 }));
        expect(decision.outcome).toBe("admitted");
        for (let round = 0; round < 30; round++) {
          await crash(crasher, jobId);
          await honest(fair, jobId);
          const job = await victim.jobs.get.query({ jobId });
          if (job.status === "completed" || job.status === "failed") break;
          await sleep(150);
        }
        const job = await victim.jobs.get.query({ jobId });
        expect(job.status).toBe("completed");
        expect((await victim.jobs.outputs.query({ jobId })).map((o) => o.stdoutText)).toEqual(["line 0"]);
        expect((await crasher.client.ledger.statement.query()).producerBalance).toBe(0);
      } finally {
        for (const p of [crasher, fair]) await p.worker.worker.depart.mutate({ machineId: p.machineId });
      }
      await expectLedgerBalances(db());
    });
  }
});

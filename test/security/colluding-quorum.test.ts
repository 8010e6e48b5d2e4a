import { describe, expect, it } from "vitest";
import { expectLedgerBalances } from "../support/books.ts";
import { catJob, forgedReport, runLease, type TestLease } from "../support/worker.ts";
import { holdings, openMarket, type Producer } from "../support/one-person.ts";

// OPEN HOLE, kept as a runnable attack: the market does not withstand it yet, so the test is
// marked it.fails (Vitest fails the run once it passes: then the hole is closed and it becomes
// it()). docs/ARCHITECTURE.md, "Open holes", says what closing it needs.

// One person with a consumer account and two producer accounts with standing (two domains) asks
// for 3 copies of each task of their own job. An honest producer with standing (100,000 verified
// results) runs the third copy and reports first. On the first task it agrees with the person's
// first machine and is paid; on the second the person's two machines report the same forged
// output. Two verifiers with standing agree on it, so the honest producer's output "disagrees with
// one that two verifiers with standing agreed on": it is caught forging (quorum.ts verifyCopies
// `forgers`), loses its standing for good, and what the job paid it goes to the person's consumer
// (tasks/forfeit.ts forfeitPay).
//
// Observed (2 tasks, asks of 0.5 a task, quote 3.3576): in honest play, with the same order of
// reports, the person's three accounts end 2.3576 poorer and the honest producer is paid 1.0; in
// the attack they end 0.8576 poorer (1.5 better: the honest producer's forfeited first piece, 0.5,
// and the person's second machine paid for the copy that makes the forged quorum, 1.0 in all), the
// honest producer ends with 0 and standing { has: false, forged: true } for good, one forfeit entry
// of 0.5 to the person's consumer; the market's account gains 0.8576 (1.3576 in honest play).

const { market, db, marketBalance, producer } = openMarket();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FORGED = "FORGED\n";

async function play(p: Producer, jobId: string, forgeIndex: number | null) {
  const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 8 });
  for (const l of leases.filter((x) => x.jobId === jobId)) {
    const line = Buffer.from((l as TestLease).stdin, "base64").toString();
    if (forgeIndex !== null && line === `line ${forgeIndex}`) {
      await p.worker.worker.report.mutate(forgedReport(p.machineId, l.leaseId, FORGED));
    } else await p.worker.worker.report.mutate(await runLease(p.worker, p.machineId, l as TestLease));
  }
}

/** The scenario, with the person's machines forging task 1 or not: what the person gained, and the honest producer's lot. */
async function scenario(tag: string, forge: boolean) {
  const buyer = await market().signUp(`${tag}-buyer@${tag}-buyer.test`, ["consumer"]);
  const a = await producer(`${tag}-a`, 0.5, true);
  const b = await producer(`${tag}-b`, 0.5, true);
  const honest = await producer(`${tag}-honest`, 0.5, true);
  const before = (await holdings(buyer)) + (await holdings(a.client)) + (await holdings(b.client));
  const marketBefore = await marketBalance();
  try {
    const { jobId, decision } = await buyer.jobs.submit.mutate({ ...catJob(2, { value: 100, workPerTask: 1 }), replicas: 3 });
    expect(decision.outcome).toBe("admitted");
    for (let round = 0; round < 20; round++) {
      await play(honest, jobId, null);
      for (const p of [a, b]) await play(p, jobId, forge ? 1 : null);
      const job = await buyer.jobs.get.query({ jobId });
      if (job.status === "completed" || job.status === "failed") break;
      await sleep(150);
    }
    const job = await buyer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    const after = (await holdings(buyer)) + (await holdings(a.client)) + (await holdings(b.client));
    const standing = await honest.client.machines.standing.query();
    const r = {
      price: decision.outcome === "admitted" ? decision.price : 0,
      gained: after - before,
      honestPaid: (await honest.client.ledger.statement.query()).producerBalance,
      honestStanding: { has: standing.has, forged: standing.forged },
      marketGained: (await marketBalance()) - marketBefore,
      forfeits: await db().ledgerEntry.count({ where: { jobId, kind: "forfeit" } }),
    };
    return r;
  } finally {
    for (const p of [a, b, honest]) await p.worker.worker.depart.mutate({ machineId: p.machineId });
  }
}

describe("two colluding accounts with standing on a replicas: 3 job of their own consumer", () => {
  it.fails("cannot have an honest third producer caught forging and its pay forfeited to their consumer", async () => {
    const honestPlay = await scenario("hon", false);
    const attack = await scenario("col", true);
    await expectLedgerBalances(db());
    // The honest producer ran its copies as asked: it is no forger, and keeps its first piece.
    expect(attack.honestStanding.forged, "the honest producer judged a forger").toBe(false);
    expect(attack.honestPaid, "what the honest producer keeps").toBeGreaterThan(0);
    // The person's accounts end no richer than honest play leaves them.
    expect(attack.gained - honestPlay.gained, "what the attack gained over honest play").toBeLessThanOrEqual(1e-6);
  });
});

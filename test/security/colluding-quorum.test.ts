import { describe, expect, it } from "vitest";
import { expectLedgerBalances } from "../support/books.ts";
import { catJob, forgedReport, runLease, type TestLease } from "../support/worker.ts";
import { holdings, openMarket, type Producer } from "../support/one-person.ts";

// One person with a consumer account and two producer accounts with standing (two domains) asks
// for 3 copies of each task of their own job. An honest producer with standing (100,000 verified
// results) runs the third copy and reports first. On the first task all three agree; on the second
// the person's two machines report the same forged output.
//
// Until the rule changed, two verifiers with standing agreeing was enough: the forged output was
// accepted, the honest producer was caught "forging" and lost its standing for good, and what the
// job paid it went to the person's consumer (1.5 credits over honest play on a quote of 3.3576).
// Now an output must lead every other by two verifiers with standing when copies disagree
// (quorum.ts CONTEST_MARGIN): 2 against 1 takes more copies, placed by the market's draw
// (replicas.ts drawnFor). Honest machines that join settle it, 4 against 2, and it is the pair
// that is caught; what they were paid goes to the market's account, never to the consumer.
//
// Observed (2 tasks, asks of 0.5, quote 3.3576): honest play leaves the person's accounts 2.3576
// poorer and pays the honest producer 1.0; the attack leaves them 3.3576 poorer (the pair's first
// pieces forfeited, their forged copies paid nothing), the honest producer paid 1.0 with its
// standing, and two forfeit entries to the market, which paid the contest's checks past the
// task's budget (contestPieces) and gained 0.8576 instead of 1.3576.

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
  const late: Producer[] = [];
  const before = (await holdings(buyer)) + (await holdings(a.client)) + (await holdings(b.client));
  const marketBefore = await marketBalance();
  try {
    const { jobId, decision } = await buyer.jobs.submit.mutate({ ...catJob(2, { value: 100, workPerTask: 1 }), replicas: 3 });
    expect(decision.outcome).toBe("admitted");
    for (let round = 0; round < 40; round++) {
      await play(honest, jobId, null);
      for (const p of [a, b]) await play(p, jobId, forge ? 1 : null);
      for (const p of late) await play(p, jobId, null);
      const job = await buyer.jobs.get.query({ jobId });
      if (job.status === "completed" || job.status === "failed") break;
      // A task the three machines leave undecided waits for a machine that holds no copy of it: honest ones join, one a round.
      if (round >= 3 && late.length < 4) late.push(await producer(`${tag}-late${late.length}`, 0.5, true));
      await sleep(150);
    }
    const job = await buyer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    const after = (await holdings(buyer)) + (await holdings(a.client)) + (await holdings(b.client));
    const standing = await honest.client.machines.standing.query();
    return {
      price: decision.outcome === "admitted" ? decision.price : 0,
      outputs: (await buyer.jobs.outputs.query({ jobId })).map((o) => o.stdoutText),
      gained: after - before,
      honestPaid: (await honest.client.ledger.statement.query()).producerBalance,
      honestStanding: { has: standing.has, forged: standing.forged },
      pairForged: [(await a.client.machines.standing.query()).forged, (await b.client.machines.standing.query()).forged],
      marketGained: (await marketBalance()) - marketBefore,
      forfeits: await db().ledgerEntry.count({ where: { jobId, kind: "forfeit" } }),
    };
  } finally {
    for (const p of [a, b, honest, ...late]) await p.worker.worker.depart.mutate({ machineId: p.machineId });
  }
}

describe("two colluding accounts with standing on a replicas: 3 job of their own consumer", () => {
  it("cannot have an honest third producer caught forging, nor take its pay", async () => {
    const honestPlay = await scenario("hon", false);
    const attack = await scenario("col", true);
    await expectLedgerBalances(db());
    expect(attack.outputs, "the job's outputs").not.toContain(FORGED);
    // The honest producer ran its copies as asked: it is no forger, and is paid for both.
    expect(attack.honestStanding, "the honest producer's standing").toEqual({ has: true, forged: false });
    expect(attack.honestPaid, "what the honest producer is paid").toBeGreaterThanOrEqual(honestPlay.honestPaid - 1e-6);
    // It is the pair that is caught, and what they were paid goes to the market, not to their consumer.
    expect(attack.pairForged).toEqual([true, true]);
    expect(attack.forfeits).toBe(2);
    // The person's accounts end no richer than honest play leaves them.
    expect(attack.gained - honestPlay.gained, "what the attack gained over honest play").toBeLessThanOrEqual(1e-6);
  });
});

import { describe, expect, it } from "vitest";
import { expectLedgerBalances } from "../support/books.ts";
import { catJob, forgedReport, runLease, type TestLease } from "../support/worker.ts";
import { holdings, openMarket, type Producer } from "../support/one-person.ts";

// OPEN HOLE, kept as a runnable attack: the market does not withstand it yet, so the test is
// marked it.fails (Vitest fails the run once it passes: then the hole is closed and it becomes
// it()). docs/ARCHITECTURE.md, "Open holes", says what closing it needs.

// A victim's job asks for 2 copies. One person's producer with standing (A) and an honest one with
// standing (H) run them; A reports a forged output. The copies disagree, so the market adds a
// tie-break copy on a machine of an account with standing that ran none: the person's second
// account with standing (B, another domain), the only one free. B reports A's forged output: two
// verifiers with standing agree on it, it is accepted as the victim's result, H is caught
// "forging" (quorum.ts verifyCopies `forgers`) and the tie-break is paid from what H's copy is not.
//
// Observed (1 task, asks of 0.5, quote 1.1121): honest play pays A 0.5, H 0.5, B nothing, the
// victim 1.1121 for "line 0". The attack: the victim pays the same 1.1121 for "FORGED\n" as its
// accepted result; A 0.5 and B 0.5 (the person gains 1.0, twice honest play, for no work); H 0 and
// standing { has: false, forged: true } for good (100,000 verified results before). Ledger balanced.

const { market, db, marketBalance, producer } = openMarket();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FORGED = "FORGED\n";

async function play(p: Producer, jobId: string, forge: boolean) {
  const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 8 });
  for (const l of leases.filter((x) => x.jobId === jobId)) {
    if (forge) await p.worker.worker.report.mutate(forgedReport(p.machineId, l.leaseId, FORGED));
    else await p.worker.worker.report.mutate(await runLease(p.worker, p.machineId, l as TestLease));
  }
  return leases.length;
}

async function scenario(tag: string, forge: boolean) {
  const victim = await market().signUp(`${tag}-victim@${tag}-victim.test`, ["consumer"]);
  const a = await producer(`${tag}-a`, 0.5, true);
  const honest = await producer(`${tag}-honest`, 0.5, true);
  const { jobId, decision } = await victim.jobs.submit.mutate({ ...catJob(1, { value: 100, workPerTask: 1 }), replicas: 2 });
  expect(decision.outcome).toBe("admitted");
  // B comes online once the two copies are placed on A and H.
  const b = await producer(`${tag}-b`, 0.5, true);
  const before = (await holdings(a.client)) + (await holdings(b.client));
  const marketBefore = await marketBalance();
  const victimBefore = await holdings(victim);
  try {
    for (let round = 0; round < 30; round++) {
      await play(a, jobId, forge);
      await play(honest, jobId, false);
      await play(b, jobId, forge);
      const job = await victim.jobs.get.query({ jobId });
      if (job.status === "completed" || job.status === "failed") break;
      await sleep(150);
    }
    const job = await victim.jobs.get.query({ jobId });
    const standing = await honest.client.machines.standing.query();
    const r = {
      status: job.status,
      price: decision.outcome === "admitted" ? decision.price : 0,
      outputs: (await victim.jobs.outputs.query({ jobId })).map((o) => o.stdoutText),
      personGained: (await holdings(a.client)) + (await holdings(b.client)) - before,
      aPaid: (await a.client.ledger.statement.query()).producerBalance,
      bPaid: (await b.client.ledger.statement.query()).producerBalance,
      honestPaid: (await honest.client.ledger.statement.query()).producerBalance,
      honestStanding: { has: standing.has, forged: standing.forged },
      victimPaid: victimBefore - (await holdings(victim)),
      marketGained: (await marketBalance()) - marketBefore,
    };
    return r;
  } finally {
    for (const p of [a, b, honest]) await p.worker.worker.depart.mutate({ machineId: p.machineId });
  }
}

describe("two colluding accounts with standing and a victim's replicas: 2 job", () => {
  it.fails("cannot outvote the honest copy with a tie-break, be paid more than honest play, and brand the honest producer a forger", async () => {
    const honestPlay = await scenario("thon", false);
    const attack = await scenario("tcol", true);
    await expectLedgerBalances(db());
    expect(attack.outputs, "the victim's result").not.toContain(FORGED);
    expect(attack.honestStanding.forged, "the honest producer judged a forger").toBe(false);
    expect(attack.personGained - honestPlay.personGained, "what forging gained over honest play").toBeLessThanOrEqual(1e-6);
  });
});

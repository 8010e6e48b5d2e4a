import { describe, expect, it } from "vitest";
import { expectLedgerBalances } from "../support/books.ts";
import { catJob, forgedReport, runLease, type TestLease } from "../support/worker.ts";
import { holdings, openMarket, type Producer } from "../support/one-person.ts";

// A victim's job asks for 2 copies. One person's producer with standing (A) and an honest one with
// standing (H) run them; A reports a forged output. The copies disagree, so the market adds a
// tie-break copy on a machine its draw names among those of accounts with standing that ran none:
// the person's second account with standing (B, another domain) is the only one. B reports A's
// forged output.
//
// Until the rule changed, two verifiers with standing agreeing settled it: the victim paid 1.1121
// for "FORGED\n", A and B were paid 0.5 each (twice honest play), and H was caught "forging" for
// good. Now an output must lead every other by two verifiers with standing when copies disagree
// (quorum.ts CONTEST_MARGIN): 2 against 1 waits for more copies, which honest machines joining
// later run, and the victim gets "line 0". A and B are the ones caught.
//
// Observed (1 task, asks of 0.5, quote 1.1121): the victim pays 1.1121 as in honest play; A and B
// are paid nothing (0.5 in honest play) and lose their standing; H is paid its 0.5 and keeps its
// standing; the checks share what the task's budget leaves after H (0.612), and the market pays
// nothing past it: the pair was paid nothing in the job, so their forfeit brought it nothing.

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
  const late: Producer[] = [];
  let bRan = 0;
  const before = (await holdings(a.client)) + (await holdings(b.client));
  const marketBefore = await marketBalance();
  const victimBefore = await holdings(victim);
  try {
    for (let round = 0; round < 40; round++) {
      await play(a, jobId, forge);
      await play(honest, jobId, false);
      bRan += await play(b, jobId, forge);
      for (const p of late) await play(p, jobId, false);
      const job = await victim.jobs.get.query({ jobId });
      if (job.status === "completed" || job.status === "failed") break;
      // Honest machines join later, one a round: the copies the contest still needs go to them.
      if (round >= 3 && late.length < 4) late.push(await producer(`${tag}-late${late.length}`, 0.5, true));
      await sleep(150);
    }
    const job = await victim.jobs.get.query({ jobId });
    const standing = await honest.client.machines.standing.query();
    return {
      status: job.status,
      price: decision.outcome === "admitted" ? decision.price : 0,
      outputs: (await victim.jobs.outputs.query({ jobId })).map((o) => o.stdoutText),
      personGained: (await holdings(a.client)) + (await holdings(b.client)) - before,
      honestPaid: (await honest.client.ledger.statement.query()).producerBalance,
      honestStanding: { has: standing.has, forged: standing.forged },
      pairForged: [(await a.client.machines.standing.query()).forged, (await b.client.machines.standing.query()).forged],
      bRan,
      victimPaid: victimBefore - (await holdings(victim)),
      marketGained: (await marketBalance()) - marketBefore,
    };
  } finally {
    for (const p of [a, b, honest, ...late]) await p.worker.worker.depart.mutate({ machineId: p.machineId });
  }
}

describe("two colluding accounts with standing and a victim's replicas: 2 job", () => {
  it("cannot outvote the honest copy with a tie-break, be paid for it, or brand the honest producer a forger", async () => {
    const honestPlay = await scenario("thon", false);
    const attack = await scenario("tcol", true);
    await expectLedgerBalances(db());
    expect(attack.status).toBe("completed");
    expect(attack.outputs, "the victim's result").toEqual(["line 0"]);
    expect(attack.honestStanding.forged, "the honest producer judged a forger").toBe(false);
    expect(attack.honestPaid, "what the honest producer is paid").toBeGreaterThanOrEqual(honestPlay.honestPaid - 1e-6);
    // A is caught; so is B when the draw gave it a copy (on a busy host an honest machine that
    // joined meanwhile may outrank it, and then B runs none).
    expect(attack.pairForged).toEqual([true, attack.bRan > 0]);
    expect(attack.personGained - honestPlay.personGained, "what forging gained over honest play").toBeLessThanOrEqual(1e-6);
    // The victim pays no more than in honest play: the checks come out of the task's budget.
    expect(attack.victimPaid).toBeLessThanOrEqual(honestPlay.victimPaid + 1e-6);
  });
});

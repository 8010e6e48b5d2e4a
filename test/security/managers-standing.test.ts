import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { addStandingFacts } from "../../apps/market-manager/src/db/sql/standing-facts.ts";
import { runStatement } from "../../apps/market-manager/src/db/sql/statement.ts";
import { viaPrisma } from "../../apps/market-manager/src/db/sql/runners.ts";
import { withDb } from "../support/books.ts";
import { managersOnOneDatabase } from "../support/managers.ts";
import { clientFor, signUp } from "../support/market.ts";
import { sleep, type ManagerProcess } from "../support/processes.ts";

// A forger caught at one Market Manager is caught at all of them (issue 47: several managers on
// one PostgreSQL; the standing rule of docs/DESIGN.md "Verification"). In an open market
// (TRUST_ALL_PRODUCERS=0) a replica quorum needs an agreeing account with standing, and an account
// caught forging has none. The attack: two accounts with standing (of two domains) forge together,
// which the quorum cannot tell from agreement; one of them was caught forging at manager-1 (the
// fact manager-1's verification writes, written here with that statement), and both have machines
// at manager-2, which read their standing when the machines joined. They forge at manager-2,
// hoping it still counts the caught one as standing and accepts the forgery.

const { database, start } = await managersOnOneDatabase("cyclemarket-managers-standing-", { TRUST_ALL_PRODUCERS: "0" });
await start("manager-1");
const second = await start("manager-2");

const machine = (name: string) => ({ name, kind: "opportunistic" as const, slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test" });
const FORGED = Buffer.from("FORGED RESULT\n");

/** A producer that earned standing a week ago (50 verified results, a confirmed address at a domain of its own), with a machine at `m`. */
async function producer(m: ManagerProcess, name: string) {
  const email = `${name}@${name}.test`;
  const session = await signUp(m.url, email, ["producer"], m.outbox);
  const userId = (await session.account.me.query())!.id;
  await withDb(database.url, async (db) => {
    await db.user.update({ where: { id: userId }, data: { createdAt: new Date(Date.now() - 7 * 86_400_000) } });
    await db.standing.create({ data: { userId, verified: 50 } });
  });
  const client = clientFor(m.url, { authorization: `Bearer ${(await session.account.tokens.create.mutate({ name })).token}` });
  const { machineId } = await client.worker.register.mutate(machine(name));
  return { userId, session, client, machineId };
}

describe("a forger caught at one manager", () => {
  it("has no standing at the other: its forgery with an accomplice is not accepted there", async () => {
    const turncoat = await producer(second, "turncoat");
    const accomplice = await producer(second, "accomplice");
    // manager-1 catches it forging.
    await withDb(database.url, (db) => runStatement(viaPrisma(db), addStandingFacts, { users: [turncoat.userId], verified: [0], disagreements: [1], unconfirmedFailures: [0], expiredLeases: [0], forgeries: [1], now: Date.now() }));
    // The managers look at what the others recorded once a stamp (market/adopt.ts): a second, and some.
    await sleep(2500);

    const consumer = await signUp(second.url, "standing-victim@example.test", ["consumer"], second.outbox);
    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "two copies",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 20_000 }, taskCount: 1 },
      benefit: { kind: "constant", value: 40 },
      replicas: 2,
    });
    expect(decision.outcome).toBe("admitted");
    const forge = async (p: typeof turncoat) => {
      const { leases } = await p.client.worker.lease.mutate({ machineId: p.machineId, max: 2 });
      for (const l of leases) {
        await p.client.worker.report.mutate({ machineId: p.machineId, leaseId: l.leaseId, exitCode: 0, stdout: FORGED.toString("base64"), stderr: "", outputHash: createHash("sha256").update(FORGED).digest("hex"), elapsedMs: 1000 });
      }
      return leases.length;
    };
    // Both copies, forged alike.
    expect((await forge(turncoat)) + (await forge(accomplice))).toBe(2);
    expect(await withDb(database.url, (db) => db.result.count({ where: { lease: { task: { jobId } }, accepted: true } }))).toBe(0);
    expect((await consumer.jobs.get.query({ jobId })).status).not.toBe("completed");
    expect(await consumer.jobs.outputs.query({ jobId })).toEqual([]);
    for (const p of [turncoat, accomplice]) expect((await p.session.ledger.statement.query()).producerBalance).toBe(0);
    await consumer.jobs.cancel.mutate({ jobId });
  });
});

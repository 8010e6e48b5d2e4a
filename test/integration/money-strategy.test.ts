import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { TRPCClientError } from "@trpc/client";
import { allowRefusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";

// The money property's second half (money-property.test.ts holds the first), in a file of its
// own so the two run side by side, each on its market.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
const RESERVE = 50_000;

beforeAll(async () => {
  market = await startTestMarket({ MARKET_RESERVE: String(RESERVE), LEASE_TIMEOUT_MS: "600000" });
}, 120_000);
afterAll(() => market?.stop());

// Strategies against honest play (issue 44, item 9): the same jobs run twice, once honestly and
// once by a person who plays both sides (their consumer and producer accounts, unrelated-looking
// or sharing a domain) with late reports, leases held with heartbeats, invented failures and
// claimed run times. Whatever the strategy, the person never ends with more than they started,
// nor with more than honest play gave them when the same jobs completed; and the market's own
// account loses nothing by it. (A job the strategy makes fail is charged only the producers' work
// it got, which the person pays to themselves: fewer results, the market's fee unearned.)
const Strategy = fc.record({
  jobs: fc.array(
    fc.record({
      tasks: fc.integer({ min: 1, max: 3 }),
      value: fc.integer({ min: 5, max: 60 }),
      // A curve that falls to a penalty after its deadline: the lateness an attacker would farm.
      penalty: fc.constantFrom(undefined, -20, -1e6),
    }),
    { minLength: 1, maxLength: 2 },
  ),
  related: fc.boolean(),
  late: fc.boolean(),
  fail: fc.boolean(),
  claim: fc.constantFrom(5, 2000, 2_147_483_000),
});
type Strategy = typeof Strategy extends fc.Arbitrary<infer T> ? T : never;

async function person(tag: string, related: boolean) {
  const buyer = await market.signUp(`buyer-${tag}@${related ? "one" : "buyers"}.test`, ["consumer"]);
  const seller = await market.signUp(`seller-${tag}@${related ? "one" : "sellers"}.test`, ["producer"]);
  const worker = market.tokenClient((await seller.account.tokens.create.mutate({ name: "rack" })).token);
  return { buyer, seller, worker };
}

const holding = async (c: Client) => {
  const s = await c.ledger.statement.query();
  return s.consumerBalance + s.producerBalance + s.inEscrow;
};

/** Runs the jobs for one person: honestly, or by the strategy. Returns what their accounts gained, and the market's change. */
async function play(s: Strategy, honest: boolean, tag: string) {
  const db = market.manager.services.db;
  const p = await person(tag, s.related);
  // After the person's starting credits: what the market pays from here on is the play's.
  const marketBefore = (await db.ledgerAccount.findFirstOrThrow({ where: { kind: "market" } })).balanceMicro;
  const before = (await holding(p.buyer)) + (await holding(p.seller));
  const { machineId } = await p.worker.worker.register.mutate({ name: "m", kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "prop" });
  const jobIds: string[] = [];
  try {
    for (const j of s.jobs) {
      const benefit = j.penalty === undefined ? { kind: "constant" as const, value: j.value } : { kind: "deadline" as const, value: j.value, deadline: 1, penalty: j.penalty };
      await allowRefusal(
        p.buyer.jobs.submit
          .mutate({ name: "strategy", source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount: j.tasks }, benefit })
          .then((r) => void jobIds.push(r.jobId)),
      );
    }
    for (let round = 0; round < 12; round++) {
      const answer = await p.worker.worker.lease.mutate({ machineId, max: 8 }).catch((e: unknown) => {
        // A machine that lets its leases lapse is taken out of the market (missed-leases): the play ends there.
        if (e instanceof TRPCClientError && (e.data as { reason?: { code?: string } } | undefined)?.reason?.code === "machine-departed") return null;
        throw e;
      });
      if (!answer) break;
      const { leases } = answer;
      if (!leases.length && round > 0) {
        const open = await db.job.count({ where: { id: { in: jobIds }, status: { in: ["admitted", "running"] } } });
        if (!open) break;
        await new Promise((r) => setTimeout(r, 300));
        continue;
      }
      if (!honest && s.late) {
        // Hold the leases past their time, heartbeating all along, then report.
        for (let i = 0; i < 4; i++) {
          await allowRefusal(p.worker.worker.heartbeat.mutate({ machineId, leaseIds: leases.map((l) => l.leaseId) }));
          await new Promise((r) => setTimeout(r, 400));
        }
      }
      for (const [i, lease] of leases.entries()) {
        const stdout = Buffer.from("3 4\n");
        const failing = !honest && s.fail && i % 2 === 0;
        await allowRefusal(
          p.worker.worker.report.mutate({
            machineId,
            leaseId: lease.leaseId,
            exitCode: failing ? -1 : 0,
            stdout: failing ? "" : stdout.toString("base64"),
            stderr: "",
            outputHash: createHash("sha256").update(failing ? Buffer.alloc(0) : stdout).digest("hex"),
            elapsedMs: honest ? 5 : s.claim,
            ...(failing ? { error: { code: "trap" as const, message: "unreachable" } } : {}),
          }),
        );
      }
    }
  } finally {
    await allowRefusal(p.worker.worker.depart.mutate({ machineId }));
    for (const jobId of jobIds) await allowRefusal(p.buyer.jobs.cancel.mutate({ jobId }));
  }
  const after = (await holding(p.buyer)) + (await holding(p.seller));
  const marketAfter = (await db.ledgerAccount.findFirstOrThrow({ where: { kind: "market" } })).balanceMicro;
  const completed = jobIds.length === s.jobs.length && (await db.job.count({ where: { id: { in: jobIds }, status: "completed" } })) === jobIds.length;
  return { gained: after - before, marketChange: Number(marketAfter - marketBefore) / 1e6, completed };
}

describe("money under a strategy", () => {
  it("never leaves one person's accounts with more than honest play of the same jobs gives them (property)", async () => {
    const db = market.manager.services.db;
    // Leases of these short tasks end after a second, so holding them past their time is quick to play.
    const live = market.manager.services.market;
    const terms = live.settings.terms;
    live.settings.terms = { ...terms, leaseFloorSeconds: 1 };
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(Strategy, async (s) => {
          run += 1;
          const honest = await play(s, true, `h${run}`);
          const strategic = await play(s, false, `s${run}`);
          expect(strategic.gained).toBeLessThanOrEqual(1e-6);
          if (strategic.completed && honest.completed) expect(strategic.gained).toBeLessThanOrEqual(honest.gained + 1e-6);
          // The market's account never pays for the strategy (it only keeps its fees).
          expect(strategic.marketChange).toBeGreaterThanOrEqual(-1e-6);
          await expectLedgerBalances(db);
        }),
        { numRuns: 8, seed: 20261128, endOnFailure: true },
      );
    } finally {
      live.settings.terms = terms;
    }
  }, 600_000);
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { allowRefusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";

// A property over random event sequences against a real market: whatever participants claim
// (reports with any elapsed time and any output, any benefit curve including huge penalties,
// dedicated offers at any price, departures at any moment, cancellations), the money held by
// everyone but the market never exceeds what the market granted plus what it paid dedicated
// machines for the time they were heard, no account but the market's is ever negative, and the
// market's never goes below minus its reserve.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
type Worker = ReturnType<TestMarket["tokenClient"]>;
const RESERVE = 50_000;
const consumers: Client[] = [];
const producers: Worker[] = [];

beforeAll(async () => {
  market = await startTestMarket({ MARKET_RESERVE: String(RESERVE), LEASE_TIMEOUT_MS: "600000" });
  for (let i = 0; i < 2; i++) consumers.push(await market.signUp(`c${i}@example.test`, ["consumer"]));
  for (let i = 0; i < 3; i++) {
    const p = await market.signUp(`p${i}@example.test`, ["producer", "consumer"]);
    producers.push(market.tokenClient((await p.account.tokens.create.mutate({ name: "rack" })).token));
  }
}, 120_000);
afterAll(() => market?.stop());

const Event = fc.oneof(
  fc.record({
    kind: fc.constant("submit" as const),
    who: fc.nat(1),
    value: fc.integer({ min: 1, max: 400 }),
    penalty: fc.oneof(fc.constant(undefined), fc.constantFrom(-1e12, -1e6, -5, 0)),
    deadline: fc.integer({ min: 1, max: 5 }),
    tasks: fc.integer({ min: 1, max: 3 }),
    replicas: fc.integer({ min: 1, max: 2 }),
  }),
  fc.record({
    kind: fc.constant("register" as const),
    who: fc.nat(2),
    price: fc.constantFrom(0, 0.5, 1000, 1_000_000),
    dedicated: fc.boolean(),
    contract: fc.constantFrom(0.01, 5, 1e6, 1e9),
    minutes: fc.integer({ min: 1, max: 600 }),
  }),
  fc.record({
    kind: fc.constant("report" as const),
    who: fc.nat(2),
    elapsedMs: fc.constantFrom(0, 5, 1500, 40_000, 2_147_483_000),
    ok: fc.boolean(),
    output: fc.constantFrom("3.14 1000\n", "FORGED RESULT", ""),
  }),
  fc.record({ kind: fc.constant("depart" as const), who: fc.nat(2) }),
  fc.record({ kind: fc.constant("cancel" as const), who: fc.nat(1) }),
  fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 1200 }) }),
);
type Event = typeof Event extends fc.Arbitrary<infer T> ? T : never;

async function run(events: Event[]) {
  const machines: { who: number; id: string }[] = [];
  const jobs: { who: number; id: string }[] = [];
  for (const e of events) {
    switch (e.kind) {
      case "submit": {
        const benefit =
          e.penalty === undefined
            ? { kind: "constant" as const, value: e.value }
            : { kind: "deadline" as const, value: e.value, deadline: e.deadline, penalty: Math.min(e.penalty, e.value) };
        await allowRefusal(
          consumers[e.who]!.jobs.submit
            .mutate({
              name: "prop",
              source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount: e.tasks },
              benefit,
              replicas: e.replicas,
            })
            .then((r) => jobs.push({ who: e.who, id: r.jobId })),
        );
        break;
      }
      case "register":
        await allowRefusal(
          producers[e.who]!.worker.register
            .mutate({
              name: "m",
              kind: e.dedicated ? "dedicated" : "opportunistic",
              slots: 2,
              speed: 1,
              memoryPerSlotMb: 512,
              bandwidthBytesPerSecond: 1e7,
              pricePerSecond: e.price,
              userAgent: "prop",
              ...(e.dedicated ? { departsAt: Date.now() + e.minutes * 60_000, contractPrice: e.contract } : {}),
            })
            .then((r) => machines.push({ who: e.who, id: r.machineId })),
        );
        break;
      case "report": {
        const mine = machines.filter((m) => m.who === e.who);
        for (const m of mine) {
          const w = producers[e.who]!;
          let leases: { leaseId: string }[] = [];
          await allowRefusal(w.worker.lease.mutate({ machineId: m.id, max: 2 }).then((r) => (leases = r.leases)));
          for (const lease of leases) {
            const stdout = Buffer.from(e.output);
            await allowRefusal(
              w.worker.report.mutate({
                machineId: m.id,
                leaseId: lease.leaseId,
                exitCode: e.ok ? 0 : 1,
                stdout: stdout.toString("base64"),
                stderr: "",
                outputHash: createHash("sha256").update(stdout).digest("hex"),
                elapsedMs: e.elapsedMs,
                ...(e.ok ? {} : { error: { code: "trap" as const, message: "unreachable" } }),
              }),
            );
          }
          await allowRefusal(w.worker.heartbeat.mutate({ machineId: m.id, leaseIds: [] }));
        }
        break;
      }
      case "depart": {
        const m = machines.find((x) => x.who === e.who);
        if (m) {
          machines.splice(machines.indexOf(m), 1);
          await allowRefusal(producers[e.who]!.worker.depart.mutate({ machineId: m.id }));
        }
        break;
      }
      case "cancel": {
        const j = jobs.find((x) => x.who === e.who);
        if (j) {
          jobs.splice(jobs.indexOf(j), 1);
          await allowRefusal(consumers[e.who]!.jobs.cancel.mutate({ jobId: j.id }));
        }
        break;
      }
      case "wait":
        await new Promise((r) => setTimeout(r, e.ms));
        break;
    }
  }
  // Leave the market empty for the next sequence: every machine departs, every open job is cancelled.
  for (const m of machines) await allowRefusal(producers[m.who]!.worker.depart.mutate({ machineId: m.id }));
  for (const j of jobs) await allowRefusal(consumers[j.who]!.jobs.cancel.mutate({ jobId: j.id }));
}

describe("money over any sequence of events", () => {
  it("is never created: participants hold at most what was granted, and the market stays within its reserve", async () => {
    const db = market.manager.services.db;
    await fc.assert(
      fc.asyncProperty(fc.array(Event, { minLength: 3, maxLength: 14 }), async (events) => {
        await run(events);
        await expectLedgerBalances(db);
        const accounts = await db.ledgerAccount.findMany();
        const granted = await db.ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { kind: "grant" }, amountMicro: { gt: 0n } } });
        const contracts = await db.ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { kind: "contract" }, amountMicro: { gt: 0n } } });
        const held = accounts.filter((a) => a.kind !== "market").reduce((s, a) => s + a.balanceMicro, 0n);
        expect(held).toBeLessThanOrEqual((granted._sum.amountMicro ?? 0n) + (contracts._sum.amountMicro ?? 0n));
        // Dedicated machines were paid no more than their contract's share of the time they were heard.
        for (const m of await db.machine.findMany({ where: { kind: "dedicated" } })) {
          const length = m.availableUntil!.getTime() - m.registeredAt.getTime();
          const heard = Math.min(m.lastHeartbeatAt.getTime(), m.availableUntil!.getTime()) - m.registeredAt.getTime();
          expect(Number(m.contractPaidMicro)).toBeLessThanOrEqual((Number(m.contractPriceMicro) * Math.max(0, heard)) / length + 1);
        }
        for (const a of accounts) expect(a.balanceMicro).toBeGreaterThanOrEqual(a.kind === "market" ? BigInt(-RESERVE) * 1_000_000n : 0n);
      }),
      { numRuns: 20, seed: 20261123, endOnFailure: true },
    );
  }, 600_000);
});

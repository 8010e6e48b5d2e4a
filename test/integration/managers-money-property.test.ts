import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { TRPCClientError } from "@trpc/client";
import { clientFor, PUBLIC_URL, signIn, signUp, startTestMarket, TEST_MARKET_ENV, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { loadConfig } from "../../apps/market-manager/src/config.ts";
import { startMarketManager, type RunningManager } from "../../apps/market-manager/src/index.ts";

// Two Market Managers on one database move the accounts they share at the same moment (issue 47,
// item 5; docs/SCALING.md "Several managers"): a consumer's, a producer's, the market's. Random
// rounds of events run in parallel, each through either manager: admins' grants from the market's
// account, jobs submitted and cancelled, tasks leased and reported (payments to producers, the
// market's fee, settlements with their refunds) and producers moving their earnings to their
// consumer balance. After each sequence no account is below its floor (zero, the market's minus
// its reserve), every entry balances, every balance is its postings, and the ledger sums to zero.

const RESERVE = 50_000;
const SECRET = "two-managers-share-this-secret-0123456789";
let first: TestMarket;
let second: RunningManager;
let secondDir: string;
const urls: string[] = [];
type Client = ReturnType<typeof clientFor>;
/** Per manager: the admin, each consumer, each producer (session), each producer's worker (token) and its machine there. */
const admins: Client[] = [];
const consumers: Client[][] = [[], []];
const producers: Client[][] = [[], []];
const workers: Client[][] = [[], []];
const machines: string[][] = [[], []];

beforeAll(async () => {
  first = await startTestMarket({ MARKET_RESERVE: String(RESERVE), LEASE_TIMEOUT_MS: "600000", MARKET_MANAGER_ID: "manager-1", BETTER_AUTH_SECRET: SECRET });
  secondDir = mkdtempSync(join(tmpdir(), "cyclemarket-second-"));
  const cfg = first.manager.services.config;
  second = await startMarketManager(
    loadConfig({
      ...TEST_MARKET_ENV,
      DATABASE_URL: cfg.DATABASE_URL!,
      MARKET_DATA_DIR: secondDir,
      MARKET_PORT: "0",
      PUBLIC_URL,
      LOG_LEVEL: "silent",
      MARKET_RESERVE: String(RESERVE),
      LEASE_TIMEOUT_MS: "600000",
      MARKET_MANAGER_ID: "manager-2",
      MARKET_MIGRATE: "0",
      BETTER_AUTH_SECRET: SECRET,
    }),
    () => {},
  );
  urls.push(first.url, `http://127.0.0.1:${second.port}`);
  const admin = first.manager.admin!;
  for (const url of urls) admins.push(await signIn(url, admin.email, admin.password));
  // Users sign up once; their sessions hold at either manager (one database, one secret).
  for (let i = 0; i < 2; i++) {
    const c = await signUp(first.url, `c${i}@example.test`, ["consumer"], first.outbox);
    consumers[0]!.push(c);
    consumers[1]!.push(await signIn(urls[1]!, `c${i}@example.test`, "correct horse battery"));
  }
  for (let i = 0; i < 2; i++) {
    const p = await signUp(first.url, `p${i}@example.test`, ["producer", "consumer"], first.outbox);
    const { token } = await p.account.tokens.create.mutate({ name: "rack" });
    producers[0]!.push(p);
    producers[1]!.push(await signIn(urls[1]!, `p${i}@example.test`, "correct horse battery"));
    // One machine at each manager: registered without following, it stays where it registered.
    for (const [m, url] of urls.entries()) {
      const w = clientFor(url, { authorization: `Bearer ${token}` });
      workers[m]!.push(w);
      const { machineId } = await w.worker.register.mutate({ name: `m${i}-${m}`, kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "prop" });
      machines[m]!.push(machineId);
    }
  }
}, 180_000);

afterAll(async () => {
  await second?.stop();
  await first?.stop();
  if (secondDir) rmSync(secondDir, { recursive: true, force: true });
});

const Event = fc.oneof(
  fc.record({ kind: fc.constant("grant" as const), who: fc.nat(1), credits: fc.constantFrom(0.5, 20, 5_000, 40_000) }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("submit" as const), who: fc.nat(1), value: fc.integer({ min: 1, max: 400 }), tasks: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("report" as const), elapsedMs: fc.constantFrom(0, 5, 1500, 40_000), ok: fc.boolean() }) },
  fc.record({ kind: fc.constant("transfer" as const), who: fc.nat(1), credits: fc.constantFrom(undefined, 0.25, 3) }),
  fc.record({ kind: fc.constant("cancel" as const), who: fc.nat(1) }),
);
type Event = typeof Event extends fc.Arbitrary<infer T> ? T : never;
/** An event and the manager (0 or 1) it goes through. */
const Step = fc.tuple(Event, fc.nat(1));
/** Rounds of steps run at once. */
const Rounds = fc.array(fc.array(Step, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 });

/** Refusals are part of the game (a balance that cannot cover, a stale lease). Anything else fails the property. */
async function allowRefusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof TRPCClientError)) throw e;
    if ((e.data as { code?: string } | undefined)?.code === "INTERNAL_SERVER_ERROR") throw e;
  }
}

/** Jobs submitted and not yet cancelled: their owner and the manager that holds them. */
const jobs: { who: number; via: number; id: string }[] = [];

async function step([e, via]: [Event, number]) {
  switch (e.kind) {
    case "grant":
      return allowRefusal(admins[via]!.admin.grantCredits.mutate({ grantId: randomUUID(), email: `c${e.who}@example.test`, credits: e.credits, reason: "property" }));
    case "submit":
      return allowRefusal(
        consumers[via]![e.who]!.jobs.submit
          .mutate({ name: "prop", source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount: e.tasks }, benefit: { kind: "constant", value: e.value } })
          .then((r) => void jobs.push({ who: e.who, via, id: r.jobId })),
      );
    case "report":
      // Every machine at that manager leases what it has and reports it.
      await Promise.all(
        workers[via]!.map(async (w, who) => {
          const machineId = machines[via]![who]!;
          let leases: { leaseId: string }[] = [];
          await allowRefusal(w.worker.lease.mutate({ machineId, max: 2 }).then((r) => void (leases = r.leases)));
          for (const lease of leases) {
            const stdout = Buffer.from("3.14 1000\n");
            await allowRefusal(
              w.worker.report.mutate({
                machineId,
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
        }),
      );
      return;
    case "transfer":
      return allowRefusal(producers[via]![e.who]!.ledger.transferEarnings.mutate({ transferId: randomUUID(), ...(e.credits === undefined ? {} : { credits: e.credits }) }));
    case "cancel": {
      const j = jobs.find((x) => x.who === e.who);
      if (!j) return;
      jobs.splice(jobs.indexOf(j), 1);
      // Cancelled at the manager that holds the job.
      return allowRefusal(consumers[j.via]![j.who]!.jobs.cancel.mutate({ jobId: j.id }));
    }
  }
}

describe("shared accounts under two Market Managers at once", () => {
  it("never go below their floor, and the ledger sums to zero", async () => {
    const db = first.manager.services.db;
    await fc.assert(
      fc.asyncProperty(Rounds, async (rounds) => {
        for (const round of rounds) await Promise.all(round.map(step));
        // Each sequence ends with no open job: the next starts from settled books.
        for (const j of jobs.splice(0)) await allowRefusal(consumers[j.via]![j.who]!.jobs.cancel.mutate({ jobId: j.id }));
        await expectLedgerBalances(db);
        const accounts = await db.ledgerAccount.findMany();
        for (const a of accounts) expect(a.balanceMicro, `${a.kind} ${a.userId ?? a.jobId}`).toBeGreaterThanOrEqual(a.minBalanceMicro);
        const market = accounts.find((a) => a.kind === "market")!;
        expect(market.minBalanceMicro).toBe(BigInt(-RESERVE) * 1_000_000n);
        for (const a of accounts.filter((x) => x.kind !== "market")) expect(a.balanceMicro).toBeGreaterThanOrEqual(0n);
      }),
      { numRuns: 25, seed: 20261129, endOnFailure: true },
    );
    // Both managers took part, and the money moved in every way the events allow.
    const byManager = await db.job.groupBy({ by: ["managerId"], _count: { _all: true } });
    expect(byManager.map((g) => g.managerId).sort()).toEqual(["manager-1", "manager-2"]);
    const kinds = new Set((await db.ledgerEntry.groupBy({ by: ["kind"], _count: { _all: true } })).map((k) => k.kind));
    for (const kind of ["admin-grant", "payment", "settlement"]) expect(kinds, `no ${kind} was written`).toContain(kind);
  }, 600_000);
});

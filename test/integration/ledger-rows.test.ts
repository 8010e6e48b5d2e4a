import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { benefitAt, escrowFor, pieceRate, settleJob, type BenefitCurve } from "@cyclemarket/costbenefit";
import { LOOP_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { accountKey, escrow, MARKET_OWNER, settlement, type Entry } from "../../apps/market-manager/src/ledger/entries.ts";
import { applyLedger, ledgerParams } from "../../apps/market-manager/src/db/sql/ledger-rows.ts";
import { runStatement, type Runner } from "../../apps/market-manager/src/db/sql/statement.ts";
import { viaPrisma } from "../../apps/market-manager/src/db/sql/runners.ts";
import { rowId } from "../../apps/market-manager/src/db/row-id.ts";
import { toMicro } from "../../apps/market-manager/src/ledger/ledger.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { waitFor } from "../support/processes.ts";
import { expectLedgerBalances } from "../support/books.ts";

// One writer per ledger rule (issue 44, item 8): every row the market writes for a random batch
// of jobs, whether a group's statement or a transaction wrote it, is the row the rule's function in
// ledger/entries.ts makes of the engine's answer, recomputed here from the facts alone: each
// machine's ask and each job's declared work (piece rates, on each result and summed into the
// payments, which a group writes one per job and producer), the quote (escrow), the engine's
// settlement of the completed job.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
type Worker = ReturnType<TestMarket["tokenClient"]>;
let consumer: Client;
const sellers: { worker: Worker; ownerId: string }[] = [];

beforeAll(async () => {
  market = await startTestMarket();
  consumer = await market.signUp("rows-buyer@example.test", ["consumer"]);
  for (const email of ["rows-a@a.test", "rows-b@b.test"]) {
    const { producer, worker } = await market.signUpProducer(email);
    const ownerId = (await producer.account.me.query())!.id;
    sellers.push({ worker, ownerId });
  }
}, 120_000);
afterAll(() => market?.stop());

const db = () => market.manager.services.db;
const WORK = 0.02;

function forged(text: string) {
  const stdout = Buffer.from(text);
  return { stdout: stdout.toString("base64"), stderr: "", outputHash: createHash("sha256").update(stdout).digest("hex") };
}

/** An entry as rows: its kind and key, and what each account moved (zero postings only where kept). */
function shape(e: Pick<Entry, "kind" | "uniqueKey" | "jobId" | "taskId" | "postings">) {
  const moves = e.postings.filter((p) => p.amount !== 0n || p.keep).map((p) => `${accountKey(p.account)} ${p.amount}`);
  return { kind: e.kind, uniqueKey: e.uniqueKey, jobId: e.jobId, taskId: e.taskId, moves: moves.sort() };
}

/** The rows the ledger holds for a job's entries, in the same shape. */
async function rowsOf(jobId: string) {
  const entries = await db().ledgerEntry.findMany({ where: { jobId }, include: { postings: { include: { account: true } } } });
  return entries.map((e) => ({
    kind: e.kind,
    uniqueKey: e.uniqueKey,
    jobId: e.jobId,
    taskId: e.taskId,
    moves: e.postings
      .map((p) => `${p.account.kind === "escrow" ? `escrow:${p.account.jobId}` : `${p.account.kind}:${p.account.userId}`} ${p.amountMicro}`)
      .sort(),
  }));
}

const Batch = fc.record({
  jobs: fc.array(fc.record({ tasks: fc.integer({ min: 1, max: 5 }), value: fc.integer({ min: 20, max: 80 }) }), { minLength: 1, maxLength: 3 }),
  asks: fc.tuple(fc.constantFrom(0.001, 0.004, 0.01), fc.constantFrom(0.002, 0.005)),
  speeds: fc.tuple(fc.constantFrom(0.5, 1, 2), fc.constantFrom(1, 1.5)),
  /** How the reports go: all in one call, one by one, or in pairs. */
  chunk: fc.constantFrom(1, 2, 50),
});

describe("the ledger's rows", () => {
  it("are, for any batch of jobs, exactly what the rules of ledger/entries.ts make of the engine's answers (property)", async () => {
    await fc.assert(
      fc.asyncProperty(Batch, async (batch) => {
        const machines = await Promise.all(
          sellers.map(async (s, i) => ({
            ...s,
            price: batch.asks[i]! * batch.speeds[i]!,
            speed: batch.speeds[i]!,
            machineId: (
              await s.worker.worker.register.mutate({
                name: `rows-${i}`,
                kind: "opportunistic",
                slots: 4,
                speed: batch.speeds[i]!,
                memoryPerSlotMb: 512,
                bandwidthBytesPerSecond: 1e7,
                // Its price per second of this machine: an ask of asks[i] per reference second.
                pricePerSecond: batch.asks[i]! * batch.speeds[i]!,
                userAgent: "rows",
              })
            ).machineId,
          })),
        );
        try {
          const jobs: { jobId: string; price: number; curve: BenefitCurve; tasks: number }[] = [];
          for (const j of batch.jobs) {
            const curve: BenefitCurve = { kind: "constant", value: j.value };
            const { jobId, decision } = await consumer.jobs.submit.mutate({
              name: "rows",
              source: { kind: "upload", moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: Array.from({ length: j.tasks }, () => ({ args: [], stdin: "" })), workPerTask: WORK, memoryMbPerTask: 16 },
              benefit: curve,
            });
            expect(decision.outcome).toBe("admitted");
            jobs.push({ jobId, price: decision.outcome === "admitted" ? decision.price : NaN, curve, tasks: j.tasks });
          }
          // Every machine leases what it is given; the reports go in chunks, so groups and transactions both write.
          for (let round = 0; round < 20 && (await db().task.count({ where: { jobId: { in: jobs.map((j) => j.jobId) }, status: { not: "done" } } })) > 0; round++) {
            for (const m of machines) {
              const { leases } = await m.worker.worker.lease.mutate({ machineId: m.machineId, max: 8 });
              const reports = leases.map((l) => ({ machineId: m.machineId, leaseId: l.leaseId, exitCode: 0, elapsedMs: 5, ...forged(`out ${l.taskId}`) }));
              for (let i = 0; i < reports.length; i += batch.chunk) await m.worker.worker.reportMany.mutate({ reports: reports.slice(i, i + batch.chunk) });
            }
          }
          const consumerId = (await consumer.account.me.query())!.id;
          for (const job of jobs) {
            const row = await db().job.findUniqueOrThrow({ where: { id: job.jobId } });
            expect(row.status).toBe("completed");
            // Facts: the quote, each machine's ask and the declared work, the job's arrival and end.
            const escrowed = toMicro(escrowFor({ pricing: "posted", price: job.price, maxBenefit: job.curve.kind === "constant" ? job.curve.value : 0 }));
            const expected: Entry[] = [escrow({ jobId: job.jobId, consumerId, amount: escrowed })];
            const accepted = await db().result.findMany({ where: { lease: { task: { jobId: job.jobId } }, accepted: true }, include: { lease: { select: { taskId: true, machineId: true } } } }).then((rows) => rows.map(({ lease, ...r }) => ({ ...r, ...lease })));
            let paid = 0n;
            const owed = new Map<string, bigint>();
            for (const r of accepted) {
              const m = machines.find((x) => x.machineId === r.machineId)!;
              const amount = toMicro(pieceRate(m.price / m.speed, WORK));
              paid += amount;
              // Each run's piece is on its result, and reaches its producer once: in its own entry
              // (a run written alone) or in its group's one entry for the job and producer.
              expect(r.paidMicro).toBe(amount);
              owed.set(m.ownerId, (owed.get(m.ownerId) ?? 0n) + amount);
            }
            const took = (row.completedAt!.getTime() - row.submittedAt.getTime()) / 1000;
            const b = benefitAt(job.curve, took);
            const s = settleJob({ pricing: "posted", price: job.price, maxSpend: job.price, benefit: b, benefitWithoutDowntime: b, contradicted: null, held: [] });
            const charged = toMicro(s.charge);
            expected.push(settlement({ jobId: job.jobId, consumerId, held: escrowed - paid, refund: escrowed - charged, heldPaid: [], memo: {} }));
            expect(row.chargedMicro).toBe(charged);
            const all = await rowsOf(job.jobId);
            const rows = all.filter((r) => r.kind !== "payment");
            expect(rows.sort((x, y) => x.uniqueKey.localeCompare(y.uniqueKey))).toEqual(expected.map(shape).sort((x, y) => x.uniqueKey.localeCompare(y.uniqueKey)));
            // Every payment moves the job's escrow to one producer, and each producer got what its runs' pieces sum to.
            const credited = new Map<string, bigint>();
            for (const e of all.filter((r) => r.kind === "payment")) {
              const [amount, ownerId] = [BigInt(e.moves.find((m) => m.startsWith("producer:"))!.split(" ")[1]!), e.moves.find((m) => m.startsWith("producer:"))!.split(" ")[0]!.slice("producer:".length)];
              expect(e.moves.sort()).toEqual([`escrow:${job.jobId} ${-amount}`, `producer:${ownerId} ${amount}`].sort());
              expect(e.uniqueKey.startsWith("pay-group:") || accepted.some((r) => e.uniqueKey === `pay:${r.id}` && e.taskId === r.taskId)).toBe(true);
              credited.set(ownerId, (credited.get(ownerId) ?? 0n) + amount);
            }
            expect(credited).toEqual(owed);
          }
          await expectLedgerBalances(db());
        } finally {
          for (const m of machines) await m.worker.worker.depart.mutate({ machineId: m.machineId });
        }
      }),
      { numRuns: 6, seed: 20261128, endOnFailure: true },
    );
  }, 300_000);
});

describe("accounts moved by concurrent statements", () => {
  // Two Market Managers' statements move shared accounts (the market's, a consumer's, a
  // producer's) at the same time. Each statement locks its accounts in one order, whatever order
  // its entries name them in: taken in the entries' order, two statements locking the same pair
  // the other way round deadlocked, and PostgreSQL undid one after a second's wait.
  it("lock them in one order, so neither waits for the other forever", async () => {
    const buyerId = (await consumer.account.me.query())!.id;
    const sellerId = sellers[0]!.ownerId;
    const move = (postings: Entry["postings"]): Entry => ({ id: rowId(), kind: "admin-grant", uniqueKey: `lock-order:${rowId()}`, jobId: null, taskId: null, memo: {}, postings });
    const post = (run: Runner, e: Entry) => runStatement(run, applyLedger, ledgerParams([e]));
    const market = { kind: "market" } as const;
    const buyer = { kind: "consumer", userId: buyerId } as const;
    const seller = { kind: "producer", userId: sellerId } as const;
    await post(viaPrisma(db()), move([{ account: market, amount: -1n }, { account: seller, amount: 1n }]));
    const before = await balances(buyerId, sellerId);

    let heldFirst!: () => void;
    const firstHolds = new Promise<void>((r) => (heldFirst = r));
    let secondWaits!: () => void;
    const secondWaiting = new Promise<void>((r) => (secondWaits = r));
    // The first holds the buyer's and the market's accounts, then wants the seller's.
    const first = db().$transaction(
      async (tx) => {
        await post(viaPrisma(tx), move([{ account: market, amount: -1n }, { account: buyer, amount: 1n }]));
        heldFirst();
        await secondWaiting;
        await post(viaPrisma(tx), move([{ account: seller, amount: 1n }, { account: market, amount: -1n }]));
      },
      { timeout: 30_000 },
    );
    await firstHolds;
    // The second names the seller's account before the buyer's.
    const second = db().$transaction(async (tx) => post(viaPrisma(tx), move([{ account: seller, amount: 1n }, { account: buyer, amount: -1n }])), { timeout: 30_000 });
    await waitFor(
      "the second statement to wait for the first's lock",
      async () => ((await db().$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%ledger_entries%'`))[0]!.n > 0 ? true : undefined),
      5_000,
      10,
    );
    secondWaits();
    await Promise.all([first, second]);
    const after = await balances(buyerId, sellerId);
    expect(after).toEqual({ buyer: before.buyer + 1n - 1n, seller: before.seller + 2n, market: before.market - 2n });
    await expectLedgerBalances(db());
  }, 60_000);
});

async function balances(buyerId: string, sellerId: string) {
  const of = async (kind: "consumer" | "producer" | "market", userId: string) => (await db().ledgerAccount.findUniqueOrThrow({ where: { kind_userId: { kind, userId } } })).balanceMicro;
  return { buyer: await of("consumer", buyerId), seller: await of("producer", sellerId), market: await of("market", MARKET_OWNER) };
}

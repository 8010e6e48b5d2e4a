import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { expectMarketInvariants, withDb } from "../support/books.ts";
import { jobCompleted, managersOnOneDatabase } from "../support/managers.ts";
import { signUp, startWorker } from "../support/processes.ts";

// Consumers shop among the Market Managers (issue 47, item 3; docs/SCALING.md "Several managers").
// Two managers on one PostgreSQL, each holding one machine: manager-1 a dear one, manager-2 a cheap
// one. A quote asked of manager-1 asks manager-2 too and answers manager-2's cheaper offer, naming
// it; the submission naming it, sent to manager-1, becomes manager-2's job and runs on its machine.
// A manager that does not answer within the shopping timeout is left out of the quote.

// Long enough for a loaded test machine; the stopped manager below costs the quote this long.
const SHOP_TIMEOUT_MS = 5_000;
const TASKS = 4;
const SAMPLES = 500_000;

const { database, workers, start } = await managersOnOneDatabase("cyclemarket-shop-", { MARKET_QUOTE_SHOP_TIMEOUT_MS: String(SHOP_TIMEOUT_MS) });

const job = (name: string) => ({
  name,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: SAMPLES }, taskCount: TASKS },
  benefit: { kind: "constant" as const, value: 50 },
});

describe("a quote with two Market Managers", () => {
  it("is the best of both, names the manager that made it, and the submission becomes that manager's job", async () => {
    const first = await start("manager-1");
    const token = readFileSync(first.tokenFile, "utf8").trim();
    // Alone in the market, manager-1 keeps the machine registered with it.
    // Fifty times dearer: the two benchmarks, taken on a busy host, never differ as much.
    workers.push(await startWorker(first.url, token, "dear", 50));
    const second = await start("manager-2");
    // manager-2 has the most room, so the machine registered with it stays there.
    workers.push(await startWorker(second.url, token, "cheap", 1));
    const dear = workers[0]!.machineIds()[0]!;
    const cheap = workers[1]!.machineIds()[0]!;
    await withDb(database.url, async (db) => {
      const rows = await db.machine.findMany({ where: { status: "active" }, select: { id: true, managerId: true } });
      expect(Object.fromEntries(rows.map((r) => [r.id, r.managerId]))).toEqual({ [dear]: "manager-1", [cheap]: "manager-2" });
    });

    const buyer = await signUp(first.url, "shopper@example.test", ["consumer"], first.outbox);
    // Asked of manager-1: both managers quote, manager-2's cheaper machine wins.
    const quote = await buyer.jobs.quote.mutate(job("pi shopped"));
    expect(quote.outcome).toBe("admitted");
    expect(quote.manager).toBe("manager-2");
    const offers = Object.fromEntries((quote.offers ?? []).map((o) => [o.manager, o]));
    expect(Object.keys(offers).sort()).toEqual(["manager-1", "manager-2"]);
    expect(offers["manager-2"]!.price).toBe(quote.outcome === "admitted" ? quote.price : NaN);
    expect(offers["manager-2"]!.price!).toBeLessThan(offers["manager-1"]!.price!);

    // The submission names the manager that quoted: sent to manager-1, it is manager-2's job.
    const { jobId, decision } = await buyer.jobs.submit.mutate({ ...job("pi shopped"), manager: quote.manager });
    expect(decision.outcome).toBe("admitted");
    await jobCompleted(buyer, jobId, "the shopped job to complete");
    await withDb(database.url, async (db) => {
      expect((await db.job.findUnique({ where: { id: jobId } }))?.managerId).toBe("manager-2");
      const { accepted } = await expectMarketInvariants(db, [jobId]);
      // manager-2 runs its jobs on its own machine: the cheap one did every task.
      expect(new Set(accepted.map((r) => r.machineId))).toEqual(new Set([cheap]));
    });

    // manager-2 stops answering (stopped, not yet past the managers' timeout): a quote waits for it
    // at most the shopping timeout, and is manager-1's own.
    second.child.kill("SIGSTOP");
    try {
      const alone = await buyer.jobs.quote.mutate(job("pi while manager-2 is stopped"));
      expect(alone.manager).toBe("manager-1");
      expect(alone.offers).toBeUndefined();
    } finally {
      second.child.kill("SIGCONT");
    }
  });
});

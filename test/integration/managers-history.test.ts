import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { managersOnOneDatabase } from "../support/managers.ts";
import { refusal, signIn } from "../support/market.ts";
import { signUp, startWorker, waitFor } from "../support/processes.ts";

// The history split by Market Manager (issue 47, item 6). Two managers on one PostgreSQL:
// manager-1 holds one machine, manager-2 two, and a job is admitted by manager-2. An admin asking
// either manager sees each manager's own machines and decisions, and the whole market's as their sum.

const SAMPLE_MS = 500;

const { database, workers, start } = await managersOnOneDatabase("cyclemarket-history-", { HISTORY_SAMPLE_MS: String(SAMPLE_MS) });

describe("the history of a market of two Market Managers", () => {
  it("is each manager's own when asked by manager, and their sum for the whole market", async () => {
    const first = await start("manager-1");
    const token = readFileSync(first.tokenFile, "utf8").trim();
    workers.push(await startWorker(first.url, token, "one", 1));
    const second = await start("manager-2");
    // manager-2 has the most room: both machines registered through it stay there.
    workers.push(await startWorker(second.url, token, "two", 1));
    workers.push(await startWorker(second.url, token, "three", 1));

    const buyer = await signUp(second.url, "history@example.test", ["consumer"], second.outbox);
    const { decision } = await buyer.jobs.submit.mutate({
      name: "pi on manager-2",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 100_000 }, taskCount: 2 },
      benefit: { kind: "constant", value: 50 },
    });
    expect(decision.outcome).toBe("admitted");

    const { email, password } = first.admin!;
    const admin = await signIn(first.url, email, password);
    const history = (manager?: string) => admin.admin.history.query({ seconds: 900, ...(manager ? { manager } : {}) });
    const machines = (s: { machinesOpportunistic: number; machinesDedicated: number }) => s.machinesOpportunistic + s.machinesDedicated;

    // The latest samples: manager-1's shows one machine, manager-2's two, the market's three; the
    // admission is manager-2's, and the market's.
    const admissions = (h: { samples: { admissions: number }[] }) => h.samples.reduce((t, s) => t + s.admissions, 0);
    const split = await waitFor(
      "each manager's samples to show its machines and decisions",
      async () => {
        const [one, two, all] = await Promise.all([history("manager-1"), history("manager-2"), history()]);
        const last = (h: typeof one) => h.samples.at(-1);
        const shown = last(one) && machines(last(one)!) === 1 && last(two) && machines(last(two)!) === 2 && last(all) && machines(last(all)!) === 3;
        return shown && admissions(two) > 0 && admissions(all) > 0 ? { one, two, all } : undefined;
      },
      30_000,
    );
    expect(split.one.manager).toBe("manager-1");
    expect(split.all.manager).toBeNull();
    expect(admissions(split.one)).toBe(0);
    expect(admissions(split.two)).toBe(1);
    expect(admissions(split.all)).toBe(1);
    // The whole market's points are the managers' moments, not one point per manager's sample.
    const at = new Set(split.all.samples.map((s) => s.at));
    expect(at.size).toBe(split.all.samples.length);

    // The same split asked of the other manager: the history is the database's, not the answering manager's.
    const fromSecond = await signIn(second.url, email, password);
    const viaSecond = await fromSecond.admin.history.query({ seconds: 900, manager: "manager-1" });
    expect(viaSecond.samples.some((s) => machines(s) === 1)).toBe(true);
    expect(viaSecond.samples.every((s) => machines(s) <= 1)).toBe(true);

    // A manager that never sampled has no history; a name past the limit is refused.
    expect((await history("manager-9")).samples).toEqual([]);
    expect((await refusal(admin.admin.history.query({ seconds: 900, manager: "m".repeat(201) }))).code).toBe("invalid-input");
  });
});

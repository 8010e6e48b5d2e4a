import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";

// The journal's statements in order go on one connection without waiting for each other's
// answers (db/client.ts Sequence): PostgreSQL must run them in the order sent, one that fails must
// fail alone, and a connection the database broke must be replaced, or the market would stop
// writing reports and leases after PostgreSQL restarted.

let market: TestMarket;
const journal = () => market.manager.services.database.journal;
const db = () => market.manager.services.db;

beforeAll(async () => {
  market = await startTestMarket();
});
afterAll(() => market?.stop());

/** A statement that sleeps `sleepMs`, then says when it was done (epoch seconds). */
const run = async (sleepMs: number) =>
  (await journal().rows<{ at: number }>("probe-sleep", `SELECT extract(epoch FROM clock_timestamp())::float8 AS at FROM pg_sleep($1::float8)`, [sleepMs / 1000]))[0]!.at;

describe("the journal's connection", () => {
  it("runs statements sent at once in the order sent, and one that fails fails alone", async () => {
    // The first sleeps: were they run side by side, the others would be written before it.
    const sent = [run(200), journal().rows("probe-fails", "SELECT 1 / $1::int AS n", [0]), run(0), run(0)];
    const outcomes = await Promise.allSettled(sent);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/division by zero/);
    const [first, , third, fourth] = outcomes.map((o) => (o.status === "fulfilled" ? (o.value as number) : 0));
    // Sent together, yet the ones that do not sleep ran only once the one that sleeps was done.
    expect(third).toBeGreaterThanOrEqual(first!);
    expect(fourth).toBeGreaterThanOrEqual(third!);
  });

  it("opens a new connection once the database ended its own", async () => {
    const pid = async () => (await journal().rows<{ pid: number }>("probe-pid", "SELECT pg_backend_pid() AS pid", []))[0]!.pid;
    const before = await pid();
    // As a PostgreSQL restart or an administrator ends it.
    const ended = await db().$queryRawUnsafe<{ ok: boolean }[]>(`SELECT pg_terminate_backend(${before}) AS ok`);
    expect(ended[0]!.ok).toBe(true);
    // The statement that finds the connection gone may fail (it was sent on it); the ones after it run.
    let after: number | null = null;
    for (let attempt = 0; attempt < 5 && after === null; attempt++) {
      after = await pid().catch(async (e: unknown) => {
        expect(String(e)).toMatch(/terminat|Connection|not queryable/i);
        await new Promise((r) => setTimeout(r, 50));
        return null;
      });
    }
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
  });
});

import { afterAll, describe, expect, it } from "vitest";
import pg from "pg";
import { Database } from "../../apps/market-manager/src/db/client.ts";
import { sharedDatabase } from "../support/postgres.ts";

// A Market Manager frozen in the middle of a transaction (stopped, its host suspended) holds that
// transaction's locks: rows of accounts every manager pays through, the advisory lock dedicated
// offers are decided under. Its connections end such a transaction once it has waited on the
// manager for the manager's takeover timeout (db/client.ts Database), so the others go on.

const IDLE_MS = 800;
const database = await sharedDatabase();
const connections = new Database(database.url, { idleInTransactionMs: IDLE_MS });
afterAll(async () => {
  await connections.close();
  await database.drop();
});

describe("a transaction whose manager froze", () => {
  it("is ended by PostgreSQL after the timeout, and another connection gets its lock", async () => {
    const frozen = await connections.pool.connect();
    frozen.on("error", () => {}); // the session is ended under it, as under a manager that wakes later
    await frozen.query("BEGIN");
    await frozen.query("SELECT pg_advisory_xact_lock(4711)");

    // Another manager's connection, which would wait for as long as the frozen one held it.
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      await other.query("SET lock_timeout = '10s'");
      const asked = Date.now();
      await other.query("SELECT pg_advisory_lock(4711)");
      const waited = Date.now() - asked;
      expect(waited).toBeGreaterThanOrEqual(IDLE_MS - 100);
      expect(waited).toBeLessThan(8_000);
    } finally {
      await other.end();
    }

    // The frozen manager, waking, finds its transaction gone: nothing it did in it was kept.
    await expect(frozen.query("SELECT 1")).rejects.toThrow();
    frozen.release(true);
  });
});

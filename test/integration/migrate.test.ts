import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { applyMigrations, loadMigrations } from "../../apps/market-manager/src/db/migrate.ts";
import { withClient } from "../../apps/market-manager/src/db/sql/owner.ts";
import { withDatabase } from "../support/postgres.ts";

// A manager migrates its database at every start (db/database.ts). A database that records every
// migration finished, with the scripts it has, is taken as up to date from one query; any other
// (new, behind, or with a failed migration) goes to the schema engine, which applies or refuses.

const shared = inject("sharedPostgres");
const names = [`migrate_${process.pid}`, `migrate_failed_${process.pid}`];
const [url, other] = names.map((name) => withDatabase(shared.adminUrl, name)) as [string, string];
const all = loadMigrations().migrationDirectories.map((d) => d.path);

beforeAll(() => withClient(shared.adminUrl, async (c) => void (await Promise.all(names.map((n) => c.query(`CREATE DATABASE ${c.escapeIdentifier(n)}`))))));
afterAll(() => withClient(shared.adminUrl, async (c) => void (await Promise.all(names.map((n) => c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(n)} WITH (FORCE)`))))));

describe("migrating at start", () => {
  it("applies every migration to a new database, then finds nothing to apply", async () => {
    expect(all.length).toBeGreaterThan(1);
    expect(await applyMigrations(url)).toEqual(all);
    expect(await applyMigrations(url)).toEqual([]);
  });

  it("refuses a database whose migration failed, rather than starting on it", async () => {
    // Every migration recorded as applied, and beside them one that failed.
    const list = loadMigrations().migrationDirectories;
    await withClient(other, async (c) => {
      await c.query(`CREATE TABLE _prisma_migrations (id varchar(36) PRIMARY KEY, checksum varchar(64) NOT NULL, finished_at timestamptz,
        migration_name varchar(255) NOT NULL, logs text, rolled_back_at timestamptz, started_at timestamptz NOT NULL DEFAULT now(), applied_steps_count integer NOT NULL DEFAULT 0)`);
      for (const [i, d] of list.entries()) {
        const script = d.migrationFile.content.tag === "ok" ? d.migrationFile.content.value : "";
        await c.query("INSERT INTO _prisma_migrations (id, checksum, migration_name, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), 1)", [
          `applied-${i}`,
          createHash("sha256").update(script).digest("hex"),
          d.path,
        ]);
      }
      await c.query("INSERT INTO _prisma_migrations (id, checksum, migration_name) VALUES ('failed-one', 'x', '99999999999999_failed')");
    });
    await expect(applyMigrations(other)).rejects.toThrow(/found failed migrations/);
  });
});

import { join } from "node:path";
import type { Config } from "../config.ts";
import { APP_ROLE, startEmbeddedPostgres } from "./embedded.ts";
import { grantAppTables } from "./sql/owner.ts";
import { applyMigrations } from "./migrate.ts";

export interface Database {
  url: string;
  embedded: boolean;
  appliedMigrations: string[];
  stop(): Promise<void>;
}

/** The configured PostgreSQL, or the embedded one under the data folder; migrated either way. */
export async function openDatabase(cfg: Config, log: (line: string) => void): Promise<Database> {
  if (cfg.DATABASE_URL) {
    // The operator's database, as the operator's role: its rights are theirs to choose.
    const appliedMigrations = cfg.MARKET_MIGRATE === "1" ? await applyMigrations(cfg.DATABASE_URL) : [];
    if (appliedMigrations.length) log(`applied migrations: ${appliedMigrations.join(", ")}`);
    return { url: cfg.DATABASE_URL, embedded: false, appliedMigrations, stop: async () => {} };
  }
  const pg = await startEmbeddedPostgres({ dataDir: join(cfg.MARKET_DATA_DIR, "postgres"), port: cfg.MARKET_PG_PORT, log, statements: cfg.MARKET_PG_STATEMENTS === "1", batch: cfg.MARKET_PG_BATCH === "1" });
  log(`embedded PostgreSQL on port ${pg.port}, data in ${join(cfg.MARKET_DATA_DIR, "postgres")}${pg.batchScheduled ? ", scheduled as batch work" : ""}`);
  try {
    // Migrations as the owner; the application then connects as its own role (sql/owner.ts).
    const appliedMigrations = await applyMigrations(pg.ownerUrl);
    if (appliedMigrations.length) log(`applied migrations: ${appliedMigrations.join(", ")}`);
    await grantAppTables(pg.ownerUrl, APP_ROLE);
    return { url: pg.url, embedded: true, appliedMigrations, stop: pg.stop };
  } catch (e) {
    await pg.stop();
    throw e;
  }
}

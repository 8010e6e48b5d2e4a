import pg from "pg";

// The application's role: it reads and writes the market's tables and nothing more. It is not a
// superuser and holds no pg_execute_server_program, so `COPY ... FROM PROGRAM` and its kin are
// refused; it cannot create tables, roles or databases. Migrations run as the owner.

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

/** One statement as the database's owner (an extension to create). */
export const runAsOwner = (ownerUrl: string, sql: string) => withClient(ownerUrl, (c) => c.query(sql)).then(() => {});

export const setPassword = (url: string, role: string, password: string) =>
  withClient(url, (c) => c.query(`ALTER ROLE ${c.escapeIdentifier(role)} PASSWORD ${c.escapeLiteral(password)}`)).then(() => {});

/** Creates the role (or sets its password to the one kept on disk) and lets it use the schema. */
export async function ensureAppRole(ownerUrl: string, role: string, password: string) {
  await withClient(ownerUrl, async (c) => {
    const r = c.escapeIdentifier(role);
    const exists = (await c.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role])).rowCount;
    const attrs = `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD ${c.escapeLiteral(password)}`;
    await c.query(exists ? `ALTER ROLE ${r} ${attrs}` : `CREATE ROLE ${r} ${attrs}`);
    await c.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
    await c.query(`GRANT USAGE ON SCHEMA public TO ${r}`);
  });
}

/** After the migrations: the role may read and write every table they made, and not change the migration history. */
export async function grantAppTables(ownerUrl: string, role: string) {
  await withClient(ownerUrl, async (c) => {
    const r = c.escapeIdentifier(role);
    await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${r}`);
    await c.query(`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO ${r}`);
    await c.query(`REVOKE INSERT, UPDATE, DELETE ON TABLE "_prisma_migrations" FROM ${r}`);
  });
}

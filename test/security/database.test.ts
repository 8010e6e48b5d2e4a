import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { dirname, join } from "node:path";
import { freePort, startTestMarket, type TestMarket } from "../support/market.ts";

// The embedded PostgreSQL with least privilege: random passwords kept 0600 beside the data, the
// application connected as a role that is not a superuser (so it cannot run programs on the
// server), a socket no other local user can write to; and a port taken by someone else moves.

let market: TestMarket;
let squatter: Server;
let takenPort: number;

beforeAll(async () => {
  // Someone else holds the port the market was told to use for PostgreSQL.
  takenPort = await freePort();
  squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(takenPort, "127.0.0.1", resolve));
  market = await startTestMarket({ MARKET_PG_PORT: String(takenPort) }, { ownServer: true });
});
afterAll(async () => {
  await market?.stop();
  squatter?.close();
});

const pgDir = () => join(dirname(market.outbox), "postgres");

describe("the embedded PostgreSQL", () => {
  it("starts on another port when its own is taken", async () => {
    const db = market.manager.services.db;
    const [row] = await db.$queryRaw<{ port: string }[]>`SELECT current_setting('port') AS port`;
    expect(Number(row!.port)).not.toBe(takenPort);
  });

  it("is used by the application through a role that is not a superuser", async () => {
    const db = market.manager.services.db;
    const [me] = await db.$queryRaw<{ user: string; rolsuper: boolean; rolcreaterole: boolean }[]>`
      SELECT current_user AS "user", rolsuper, rolcreaterole FROM pg_roles WHERE rolname = current_user`;
    expect(me).toMatchObject({ rolsuper: false, rolcreaterole: false });
    expect(me!.user).not.toBe("cyclemarket");
  });

  it("refuses the application's role COPY ... FROM PROGRAM", async () => {
    const db = market.manager.services.db;
    await expect(db.$executeRawUnsafe(`COPY "Setting" FROM PROGRAM 'id'`)).rejects.toThrow(/permission denied|must be superuser|pg_execute_server_program/i);
    await expect(db.$executeRawUnsafe(`CREATE TABLE intruder (x int)`)).rejects.toThrow(/permission denied/i);
  });

  it("keeps random passwords 0600 beside the data, none of them the old fixed one", () => {
    for (const name of ["owner-password", "app-password"]) {
      const file = join(pgDir(), name);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const secret = readFileSync(file, "utf8").trim();
      expect(secret.length).toBeGreaterThanOrEqual(24);
      expect(secret).not.toBe("cyclemarket");
    }
  });

  it("has a socket no other local user can write to", () => {
    const [, , , port, socketDir] = readFileSync(join(pgDir(), "pgdata/postmaster.pid"), "utf8").split("\n");
    const socket = join(socketDir!.trim(), `.s.PGSQL.${port!.trim()}`);
    expect(statSync(socket).mode & 0o007).toBe(0);
  });
});

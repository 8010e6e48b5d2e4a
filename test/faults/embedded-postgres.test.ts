import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../../apps/market-manager/src/db/embedded.ts";
import { schedulingPolicy } from "../../apps/market-manager/src/db/batch-scheduling.ts";
import { procStat } from "../../apps/market-manager/src/db/proc.ts";
import { freePort } from "../support/market.ts";
import { Output, embeddedUrl, exit, killHard, root, stopGently, tempDir, waitFor } from "../support/processes.ts";

// The embedded PostgreSQL of a Market Manager that died without stopping it: the server lives on
// as an orphan holding the data folder, or died too and left its lock file behind. The next
// start on that folder must get the market's data back either way, and must never take the
// server away from a Market Manager that is still running.

const dataDir = tempDir("cyclemarket-faults-");
const pgDir = join(dataDir, "postgres");
const lockFile = join(pgDir, "pgdata/postmaster.pid");
let port: number;
const children: ChildProcess[] = [];

/** A process that starts the embedded server on the folder and keeps it, as the Market Manager does. */
async function holder() {
  const code = `
    import { startEmbeddedPostgres } from ${JSON.stringify(join(root, "apps/market-manager/src/db/embedded.ts"))};
    const db = await startEmbeddedPostgres({ dataDir: process.argv[1], port: Number(process.argv[2]) });
    process.on("SIGTERM", () => db.stop().then(() => process.exit(0)));
    console.log("ready");
    setInterval(() => {}, 1 << 30);`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code, pgDir, String(port)], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  await new Output(child, "holder").next(/^ready/, 60_000);
  return child;
}

const serverPid = () => Number(readFileSync(lockFile, "utf8").split("\n")[0]);
/** Running, that is: not gone and not a zombie waiting for init to reap it. */
const alive = (pid: number) => {
  if (!(pid > 1)) return false; // 0 would mean our own process group
  const state = procStat(pid)?.[0]; // undefined: gone
  return state !== undefined && state !== "Z";
};

async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: embeddedUrl(pgDir) });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  port = await freePort();
  const db = await startEmbeddedPostgres({ dataDir: pgDir, port });
  await query("create table market_note (id serial primary key, note text not null)");
  await query("insert into market_note (note) values ('committed before any crash')");
  await db.stop();
});

afterAll(async () => {
  for (const child of children) await stopGently(child);
  const last = serverPidOrZero();
  if (alive(last)) process.kill(last, "SIGINT");
  await waitFor("the last server to stop", async () => (alive(last) ? undefined : true), 20_000).catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
});
function serverPidOrZero() {
  try {
    return serverPid();
  } catch {
    return 0;
  }
}

describe("the embedded PostgreSQL after its Market Manager was killed", () => {
  it("stops the orphaned server cleanly and starts its own on the same data", async () => {
    const manager = await holder();
    await query("insert into market_note (note) values ('committed just before kill -9')");
    await killHard(manager);
    const orphan = serverPid();
    expect(alive(orphan)).toBe(true); // the server outlived its Market Manager

    const db = await startEmbeddedPostgres({ dataDir: pgDir, port });
    try {
      expect(alive(orphan)).toBe(false);
      const notes = await query<{ note: string }>("select note from market_note order by id");
      expect(notes.map((n) => n.note)).toEqual(["committed before any crash", "committed just before kill -9"]);
    } finally {
      await db.stop();
    }
  });

  it("starts over a server that was killed too, leaving its lock file behind", async () => {
    const manager = await holder();
    await killHard(manager);
    const orphan = serverPid();
    process.kill(orphan, "SIGKILL");
    await waitFor("the server to die", async () => (alive(orphan) ? undefined : true), 10_000, 50);

    const db = await startEmbeddedPostgres({ dataDir: pgDir, port });
    try {
      expect(await query("select note from market_note")).toHaveLength(2);
    } finally {
      await db.stop();
    }
  });

  it("starts over a lock file naming a live process that is not PostgreSQL (a reused pid)", async () => {
    const other = spawn("sleep", ["60"], { stdio: "ignore" });
    children.push(other);
    writeFileSync(lockFile, `${other.pid}\n${join(pgDir, "pgdata")}\n`);
    const db = await startEmbeddedPostgres({ dataDir: pgDir, port });
    try {
      expect(await query("select note from market_note")).toHaveLength(2);
      expect(alive(other.pid!)).toBe(true);
    } finally {
      await db.stop();
      other.kill();
      await exit(other);
    }
  });

  it("refuses to take the server from a Market Manager that is still running", async () => {
    const manager = await holder();
    const server = serverPid();
    await expect(startEmbeddedPostgres({ dataDir: pgDir, port })).rejects.toThrow(/belongs to a running process/);
    expect(alive(server)).toBe(true);
    expect(await query("select note from market_note")).toHaveLength(2);
    await stopGently(manager);
    expect(alive(server)).toBe(false);
  });
});

// On one machine the server's backends, woken by each statement, would take the core from the
// manager in the middle of its turn; as batch work they wait for it (db/batch-scheduling.ts).
describe("the embedded PostgreSQL's scheduling", () => {
  /** The policy of a backend started now, read while its connection is open. */
  async function newBackendPolicy() {
    const client = new pg.Client({ connectionString: embeddedUrl(pgDir) });
    await client.connect();
    try {
      return schedulingPolicy((await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid);
    } finally {
      await client.end();
    }
  }

  it("runs the server and every backend it starts later as batch work", async () => {
    const said: string[] = [];
    const db = await startEmbeddedPostgres({ dataDir: pgDir, port, log: (line) => said.push(line) });
    try {
      expect(db.batchScheduled, said.join("\n")).toBe(true);
      expect(schedulingPolicy(serverPid())).toBe("batch");
      // A backend started after the server was moved: it inherits the policy.
      expect(await newBackendPolicy()).toBe("batch");
    } finally {
      await db.stop();
    }
  });

  it("leaves it an ordinary process when told to (MARKET_PG_BATCH=0)", async () => {
    const db = await startEmbeddedPostgres({ dataDir: pgDir, port, batch: false });
    try {
      expect(db.batchScheduled).toBe(false);
      expect(schedulingPolicy(serverPid())).toBe("normal");
      expect(await newBackendPolicy()).toBe("normal");
    } finally {
      await db.stop();
    }
  });
});

describe("the embedded PostgreSQL's text", () => {
  it("is ordered by code point by PostgreSQL's own locale, whatever the host's, and cased by Unicode", async () => {
    const db = await startEmbeddedPostgres({ dataDir: pgDir, port });
    try {
      // The cluster was made by beforeAll: the host's C library has no say in its order.
      const [database] = await query<{ provider: string; locale: string }>("select datlocprovider as provider, datlocale as locale from pg_database where datname = current_database()");
      expect(database).toEqual({ provider: "b", locale: "C.UTF-8" });
      const sorted = await query<{ word: string }>("select word from unnest(array['zebra', 'Zebra', 'apple', 'Éclair', 'éclair']) as word order by word");
      expect(sorted.map((r) => r.word)).toEqual(["Zebra", "apple", "zebra", "Éclair", "éclair"]);
      const [cased] = await query<{ upper: string }>("select upper('éclair') as upper");
      expect(cased!.upper).toBe("ÉCLAIR");
    } finally {
      await db.stop();
    }
  });
});

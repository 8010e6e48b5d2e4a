import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { startWebApp } from "../../scripts/stack.ts";
import { buildWebOnce } from "../support/web-build.ts";
import { freePort, onFreePort, PortTakenError } from "../../apps/market-manager/src/net/free-port.ts";
import { startTestMarket } from "../support/market.ts";
import { Output, exit, root, startManager, stopGently, stopLeftoverPostgres, tempDir, type ManagerProcess } from "../support/processes.ts";

// Ports never race. On a machine with thousands of loopback connections open and more opened
// and closed all the time, every server the tests start comes up; a port someone else holds
// moves a server the tests placed to another port, and makes `npm start` name the port and the
// variable that changes it.

const HELD_CONNECTIONS = 3000;
let storm: ChildProcess;
const squatters: Server[] = [];
const children: ChildProcess[] = [];
/** Web apps run under npx in process groups of their own, stopped as a group. */
const webs: ChildProcess[] = [];
const dataDirs: string[] = [];

/** Someone else listening on a free port. */
async function occupy(): Promise<number> {
  const port = await freePort();
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(port, "127.0.0.1", resolve));
  squatters.push(squatter);
  return port;
}

const dataDir = (prefix: string) => {
  const dir = tempDir(prefix);
  dataDirs.push(dir);
  return dir;
};

beforeAll(async () => {
  // Its own process, with room for the file descriptors of both ends of every connection.
  storm = spawn("sh", ["-c", 'ulimit -n 16384 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec node "$0" "$@"', join(root, "test/support/connection-storm.mjs"), String(HELD_CONNECTIONS), "50"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [, held] = (await new Output(storm, "storm").next(/^holding (\d+)/, 60_000))!;
  console.log(`the storm holds ${held} loopback connections open and churns more meanwhile`);
  expect(Number(held)).toBeGreaterThanOrEqual(HELD_CONNECTIONS);
  await buildWebOnce();
});

afterAll(async () => {
  for (const child of children) await stopGently(child);
  for (const web of webs) if (web.pid) process.kill(-web.pid, "SIGTERM");
  storm?.kill();
  if (storm) await exit(storm);
  for (const squatter of squatters) squatter.close();
  for (const dir of dataDirs) {
    await stopLeftoverPostgres(dir);
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("ports on a busy machine", () => {
  it("are chosen where no outgoing connection can take them", async () => {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    for (let i = 0; i < 200; i++) expect(await freePort()).toBeLessThan(low!);
  });

  it("a market in a test starts beside the storm, its PostgreSQL moving off a taken port", async () => {
    const taken = await occupy();
    const market = await startTestMarket({ MARKET_PG_PORT: String(taken) }, { ownServer: true });
    try {
      const [row] = await market.manager.services.db.$queryRaw<{ port: string }[]>`SELECT current_setting('port') AS port`;
      expect(Number(row!.port)).not.toBe(taken);
      expect((await fetch(`${market.url}/healthz`)).status).toBe(200);
    } finally {
      await market.stop();
    }
  });

  it("a Market Manager placed on a taken port is started again on another one", async () => {
    const taken = await occupy();
    const refused: unknown[] = [];
    const moves: string[] = [];
    const dir = dataDir("cyclemarket-ports-");
    const manager: ManagerProcess = await onFreePort(
      (port) => startManager({ port, dataDir: dir, leaseTimeoutMs: 30_000 }).catch((e) => (refused.push(e), Promise.reject(e))),
      { first: taken, log: (line) => moves.push(line) },
    );
    children.push(manager.child);
    expect(refused[0]).toBeInstanceOf(PortTakenError);
    expect((refused[0] as Error).message).toBe(`Port ${taken} is taken by another program; set MARKET_PORT to a free port.`);
    expect(moves[0]).toMatch(new RegExp(`port ${taken} was taken; trying \\d+`));
    expect(manager.port).not.toBe(taken);
    expect((await fetch(`${manager.url}/healthz`)).status).toBe(200);
  });

  it("the web app placed on a taken port is started again on another one", async () => {
    const taken = await occupy();
    const refused: unknown[] = [];
    let port = 0;
    const web = await onFreePort(
      (p) => {
        port = p;
        return startWebApp({ port: p, host: "127.0.0.1", env: { NEXT_TELEMETRY_DISABLED: "1", MARKET_API_URL: "http://127.0.0.1:9" }, log: () => {} }).catch(
          (e) => (refused.push(e), Promise.reject(e)),
        );
      },
      { first: taken },
    );
    webs.push(web);
    expect(refused[0]).toBeInstanceOf(PortTakenError);
    expect((refused[0] as PortTakenError).variable).toBe("PORT");
    expect(port).not.toBe(taken);
    expect((await fetch(`http://127.0.0.1:${port}/signin`)).status).toBe(200);
  });

  for (const variable of ["MARKET_PORT", "PORT", "MARKET_HEALTH_PORT"]) {
    it(`npm start names a taken ${variable} and the variable that changes it, without a stack`, async () => {
      const taken = await occupy();
      const env = {
        ...process.env,
        MARKET_DATA_DIR: dataDir("cyclemarket-start-"),
        MARKET_PORT: String(await freePort()),
        PORT: String(await freePort()),
        MARKET_HEALTH_PORT: String(await freePort()),
        [variable]: String(taken),
      };
      delete env.DATABASE_URL;
      const start = spawn(process.execPath, ["--import", "tsx", join(root, "scripts/start.ts")], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
      children.push(start);
      const out = new Output(start, "start");
      await exit(start);
      expect(start.exitCode).toBe(1);
      const said = out.lines.join("\n");
      expect(said).toContain(`Cycle Market did not start: Port ${taken} is taken by another program; set ${variable} to a free port.`);
      expect(said).not.toMatch(/EADDRINUSE|\n\s+at /);
    });
  }
});

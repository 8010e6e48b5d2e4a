import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { fromBase64 } from "../base64.ts";
import { FakeMarket } from "../testing/fake-market.ts";
import { exampleBytes } from "../testing/fixtures.ts";
import { serveWorkerApi, type FakeTrpcServer } from "../testing/trpc-server.ts";
import { parseCommand } from "./cli.ts";
import { managersWanted, pickManagers } from "./several-managers.ts";

const bin = fileURLToPath(new URL("../../bin/worker.mjs", import.meta.url));

// Started with a module hook that refuses any TypeScript source or loader: the CLI runs the built
// JavaScript only (its threads load their own bundle, dist/pool-thread.mjs).
const NO_TYPESCRIPT_HOOKS = `export async function resolve(specifier, context, next) {
  if (/(^|[\\/])tsx([\\/]|$)|\\.ts$/.test(specifier)) throw new Error("a TypeScript module was loaded: " + specifier);
  return next(specifier, context);
}`;
const noTypeScript = [
  "--import",
  `data:text/javascript,${encodeURIComponent(`import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(NO_TYPESCRIPT_HOOKS)}`)});`)}`,
];
let server: FakeTrpcServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => (condition() ? resolve() : Date.now() > deadline ? reject(new Error("timed out")) : setTimeout(check, 20));
    check();
  });
}

describe("parseCommand", () => {
  it("reads the producer's controls, refusing a bad one with its limit in words", () => {
    const argv = ["--url", "http://localhost:4000", "--token", "t", "--cpu-limit", "50", "--only-idle", "--idle-load", "0.2", "--schedule", "Mon-Fri 18:00-08:00", "--max-task-memory", "256", "--paused", "--hand-back", "now"];
    expect(parseCommand(argv, {})).toMatchObject({
      ok: true,
      flags: { controls: { cpuLimit: 50, onlyIdle: true, idleLoad: 0.2, schedule: "Mon-Fri 18:00-08:00", maxTaskMemoryMb: 256, paused: true, handBack: "now" } },
    });
    expect(parseCommand(["--url", "http://localhost:4000", "--token", "t"], {})).toMatchObject({ ok: true, flags: { controls: {} } });
    expect(parseCommand(["--url", "http://localhost:4000", "--token", "t", "--cpu-limit", "half"], {})).toMatchObject({ ok: false, help: false });
    expect(parseCommand(["--url", "http://localhost:4000", "--token", "t", "--cpu-limit", "150"], {})).toEqual({ ok: false, help: false, message: "The CPU limit is at most 100%." });
    expect(parseCommand(["--url", "http://localhost:4000", "--token", "t", "--hand-back", "later"], {})).toMatchObject({ ok: false, message: expect.stringContaining("finish") });
  });

  it("reads flags, with the token from the environment as a fallback", () => {
    const c = parseCommand(["--url", "http://localhost:4000", "--slots", "3", "--price", "2.5"], { CYCLEMARKET_WORKER_TOKEN: "tok" });
    expect(c).toMatchObject({ ok: true, flags: { url: "http://localhost:4000", token: "tok", slots: 3, price: 2.5, kind: "opportunistic" } });
  });

  it("reads --managers as all, a count or a list of ids, and refuses it for a dedicated machine", () => {
    const base = ["--url", "http://localhost:4000", "--token", "t"];
    expect(parseCommand([...base, "--managers", "all"], {})).toMatchObject({ ok: true, flags: { managers: { all: true } } });
    expect(parseCommand([...base, "--managers", "2"], {})).toMatchObject({ ok: true, flags: { managers: { count: 2 } } });
    expect(parseCommand([...base, "--managers", "manager-1, manager-3"], {})).toMatchObject({ ok: true, flags: { managers: { ids: ["manager-1", "manager-3"] } } });
    expect(parseCommand([...base, "--managers", "0"], {})).toMatchObject({ ok: false, message: "--managers must be 1 to 64 managers" });
    expect(parseCommand([...base, "--kind", "dedicated", "--hours", "1", "--contract", "5", "--managers", "all"], {})).toMatchObject({
      ok: false,
      message: expect.stringContaining("would pay the same hours more than once"),
    });
    const one = parseCommand(base, {});
    expect(one.ok && one.flags.managers).toBeUndefined();
  });

  it("offers the machine to the managers chosen among the live ones, the most room first", () => {
    const live = [{ id: "manager-2" }, { id: "manager-1" }, { id: "manager-3" }];
    expect(pickManagers(live, { all: true })).toEqual(live);
    expect(pickManagers(live, { count: 2 })).toEqual([{ id: "manager-2" }, { id: "manager-1" }]);
    expect(pickManagers(live, { ids: ["manager-3", "manager-1"] })).toEqual([{ id: "manager-3" }, { id: "manager-1" }]);
    expect(() => pickManagers(live, { ids: ["manager-9"] })).toThrow("no live Market Manager named manager-9 (live: manager-2, manager-1, manager-3)");
  });

  it("follows the live managers: one that joins is offered the machine, one that died no longer", () => {
    const live = [{ id: "manager-3" }, { id: "manager-1" }];
    // manager-2 died, manager-3 joined.
    expect(managersWanted(live, { all: true }, ["manager-1", "manager-2"])).toEqual(["manager-3", "manager-1"]);
    expect(managersWanted(live, { ids: ["manager-1", "manager-2"] }, ["manager-1", "manager-2"])).toEqual(["manager-1"]);
    // A count keeps the managers offered to while they live, and fills up with the most room.
    expect(managersWanted(live, { count: 1 }, ["manager-1"])).toEqual(["manager-1"]);
    expect(managersWanted(live, { count: 2 }, ["manager-2", "manager-1"])).toEqual(["manager-1", "manager-3"]);
    expect(managersWanted([], { all: true }, ["manager-1"])).toEqual([]);
  });

  it("explains each bad flag in words", () => {
    const c = parseCommand(["--url", "localhost", "--slots", "0"], {});
    expect(c.ok).toBe(false);
    if (!c.ok) {
      expect(c.message).toContain("--url must be an http(s) URL");
      expect(c.message).toContain("--token is required");
      expect(c.message).toContain("--slots must be at least 1");
    }
    const missing = parseCommand(["--token", "t"], {});
    expect(!missing.ok && missing.message).toContain("--url is required: the market's web address, e.g. http://localhost:3000");
  });
});

describe("cyclemarket-worker", () => {
  it("benchmarks, registers over tRPC, runs and reports tasks, and departs on SIGTERM with exit 0, loading no TypeScript", async () => {
    const market = new FakeMarket();
    const moduleHash = await market.addModule(exampleBytes("primes"));
    for (let i = 0; i < 3; i++) {
      market.queue.push({ taskId: `t${i}`, jobId: "j", moduleHash, args: [String(i * 1000), String((i + 1) * 1000)], stdin: "", limits: { wallMs: 10_000, memoryPages: 64, outputBytes: 1024 } });
    }
    server = await serveWorkerApi(market);
    const child = spawn(process.execPath, [...noTypeScript, bin, "--url", server.url, "--token", "secret-token", "--slots", "2", "--name", "cli test"], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

    await until(() => market.reports.length === 3);
    child.kill("SIGTERM");
    const code = await exited;

    expect(code, output).toBe(0);
    expect(market.registered[0]).toMatchObject({ name: "cli test", slots: 2, kind: "opportunistic" });
    expect(market.registered[0]!.speed).toBeGreaterThan(0);
    expect(server.authorizations.every((a) => a === "Bearer secret-token")).toBe(true);
    const counts = market.reports.map((r) => new TextDecoder().decode(fromBase64(r.stdout)).trim().split(" ")[2]);
    expect(counts.sort()).toEqual(["135", "168", "127"].sort());
    expect(market.departed).toEqual(["m1"]);
    expect(output).toContain("departed");
  }, 30_000);
});

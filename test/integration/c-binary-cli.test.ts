import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { BYTEPATTERN_WASM, bytepatternOutput } from "../support/bytepattern.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { root, startWorker, stopGently, tempDir, type WorkerProcess } from "../support/processes.ts";

// A C program compiled to WASI with clang (apps/worker-runtime/examples/c), whose stdout is
// binary, submitted with the cyclemarket CLI to a real market and run by a real Node worker:
// every task's output must come back byte for byte, and a job that does not complete must say
// why in words with a non-zero exit.

const COUNT = 20;
let market: TestMarket;
let consumeToken: string;
let consumer: Awaited<ReturnType<TestMarket["signUp"]>>;
let patternJobId: string | undefined;
let worker: WorkerProcess | undefined;
const dir = tempDir("cyclemarket-c-binary-");

const cli = (args: string[]) =>
  promisify(execFile)(process.execPath, [join(root, "packages/client/bin/cyclemarket.mjs"), ...args], { cwd: dir, env: { ...process.env, XDG_CONFIG_HOME: join(dir, "config") }, maxBuffer: 1 << 24 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

function writeJob(name: string, job: Record<string, unknown>) {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ name, module: "bytepattern.wasm", benefit: { kind: "constant", value: 100 }, workPerTask: 0.01, ...job }, null, 2));
  return path;
}

beforeAll(async () => {
  market = await startTestMarket({ LEASE_TIMEOUT_MS: "600000" });
  consumer = await market.signUp("c-user@example.test", ["consumer"]);
  consumeToken = (await consumer.account.tokens.create.mutate({ name: "scripts", scopes: ["consume"] })).token;
  const producer = await market.signUp("c-lab@example.test", ["producer"]);
  const produceToken = (await producer.account.tokens.create.mutate({ name: "fleet", scopes: ["produce"] })).token;
  copyFileSync(BYTEPATTERN_WASM, join(dir, "bytepattern.wasm"));
  worker = await startWorker(market.url, produceToken, "c-lab");
}, 120_000);
afterAll(async () => {
  await stopGently(worker?.child);
  await market?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a C program with binary stdout, through the CLI", () => {
  it("writes every task's output byte for byte, results.json, and exits 0", async () => {
    // One stdin for all tasks, with a NUL, bytes that are not UTF-8 and a multi-byte character.
    const stdin = "bytes\u0000\u00ff and \u00e9\n";
    const path = writeJob("pattern", { limits: { memoryMb: 16, wallSeconds: 10 }, tasks: { count: COUNT, args: ["{i}"], stdin } });
    const out = join(dir, "out");
    const run = await cli(["submit", path, "--url", market.url, "--token", consumeToken, "--wait", "--out", out]);
    expect(run.stderr).not.toContain("Error");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${COUNT}/${COUNT} tasks done`);
    patternJobId = /Job (\S+):/.exec(run.stdout)?.[1];

    const files = readdirSync(out);
    expect(files.filter((f) => f.endsWith(".out"))).toHaveLength(COUNT);
    const manifest = JSON.parse(readFileSync(join(out, "results.json"), "utf8")) as { tasks: { index: number; args: string[]; exitCode: number; outputHash: string }[] };
    expect(manifest.tasks.map((t) => t.index)).toEqual(Array.from({ length: COUNT }, (_, i) => i));
    for (let i = 0; i < COUNT; i++) {
      const want = bytepatternOutput(i, Buffer.from(stdin, "utf8"));
      const got = readFileSync(join(out, `${i}.out`));
      expect(got.equals(want), `task ${i}'s output`).toBe(true);
      expect(got.includes(0)).toBe(true);
      expect(got.toString("utf8").includes("\ufffd")).toBe(true); // not valid UTF-8
      const t = manifest.tasks[i]!;
      expect(t).toMatchObject({ args: [String(i)], exitCode: 0, outputHash: createHash("sha256").update(want).digest("hex") });
    }
  }, 240_000);

  it("results into a reader that stops early (| head) ends quietly, without a stack trace", async () => {
    expect(patternJobId).toBeDefined();
    const child = spawn(process.execPath, [join(root, "packages/client/bin/cyclemarket.mjs"), "results", patternJobId!, "--url", market.url, "--token", consumeToken], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy(); // the reader is gone before the first line is written
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => void (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).not.toMatch(/EPIPE|node:events|at /);
    expect(code).toBe(0);
  });

  it("an --out that is a file is refused before the job is submitted", async () => {
    const before = (await consumer.jobs.list.query()).length;
    const file = join(dir, "not-a-folder");
    writeFileSync(file, "");
    const run = await cli(["submit", writeJob("blocked-out", { tasks: { count: 2, args: ["{i}"] } }), "--url", market.url, "--token", consumeToken, "--out", file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("a file is in the way");
    expect(run.stderr).not.toMatch(/ENOTDIR|node:fs/);
    expect(await consumer.jobs.list.query()).toHaveLength(before);
  });

  it("a token the market does not know: the CLI and the worker say so, and the worker stops", async () => {
    const status = await cli(["status", "abcdef12", "--url", market.url, "--token", "cmk_not-a-token"]);
    expect(status.code).toBe(4);
    expect(status.stderr).toContain("This API token is not accepted");
    const bogus = spawn(process.execPath, [join(root, "apps/worker-runtime/bin/worker.mjs"), "--url", market.url, "--token", "cmk_not-a-token", "--slots", "1"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let said = "";
    for (const stream of [bogus.stdout, bogus.stderr]) stream.on("data", (d: Buffer) => void (said += d.toString()));
    // A busy host may take long to start it; one that never stops is stopped, and says what it did.
    const guard = setTimeout(() => bogus.kill("SIGKILL"), 90_000);
    const code = await new Promise<number | null>((resolve) => bogus.on("close", resolve)).finally(() => clearTimeout(guard));
    expect(code, said).toBe(1);
    expect(said).toContain("cyclemarket-worker: the market refused this machine: This API token is not accepted");
  }, 120_000);

  it("a rejected job exits non-zero with the market's reason in words", async () => {
    // Worth almost nothing and only within a millisecond: no completion could ever pay for it.
    const path = writeJob("worthless", { benefit: { kind: "deadline", value: 0.000001, deadline: 0.001, penalty: 0 }, tasks: { count: 2, args: ["{i}"] } });
    const run = await cli(["submit", path, "--url", market.url, "--token", consumeToken, "--wait"]);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toMatch(/: rejected: .*benefit/);
  });

  it("a cancelled job exits non-zero and says it was cancelled", async () => {
    // Stop the worker so the job cannot complete before it is cancelled.
    await stopGently(worker?.child);
    worker = undefined;
    const submitted = await cli(["submit", writeJob("to-cancel", { tasks: { count: 3, args: ["{i}"] } }), "--url", market.url, "--token", consumeToken]);
    const id = /Job (\S+):/.exec(submitted.stdout)?.[1];
    expect(id, submitted.stdout + submitted.stderr).toBeDefined();
    // No machine is left to run it: delayed, and told what becomes of it.
    expect(submitted.stdout).toMatch(/: delayed: /);
    expect(submitted.stdout).toMatch(/asks again whenever machines or load change .*; if it still is not by .*, it is rejected and nothing is charged\./);
    const cancel = await cli(["cancel", id!, "--url", market.url, "--token", consumeToken]);
    expect(cancel.code, cancel.stderr).toBe(0);
    // Asked by its short id, as the pages show it (the id's last 8 characters).
    const status = await cli(["status", id!.slice(-8), "--url", market.url, "--token", consumeToken]);
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/cancelled/);
    expect(status.stdout).toContain(`short id ${id!.slice(-8)}`);
    // Its tasks were stopped, not failed (the job's page says the same).
    expect(status.stdout).toMatch(/\d+ stopped/);
    expect(status.stdout).not.toMatch(/\d+ failed/);
  });
});

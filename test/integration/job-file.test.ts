import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { connect, MarketError, type CycleMarket } from "../../packages/client/src/index.ts";
import { CAT_WAT, READ_FILE_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { createNodePool } from "../../apps/worker-runtime/src/node/pool.ts";
import { createTrpcApi } from "../../apps/worker-runtime/src/node/trpc-api.ts";
import { runProducer } from "../../apps/worker-runtime/src/producer.ts";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { root, tempDir, waitFor } from "../support/processes.ts";
import { paddedModule } from "../support/wasm.ts";
import { untar } from "../support/tar.ts";

// The consumer's side from the outside: a job file, a module uploaded once by hash, a
// consume-scoped token, outputs that come back byte for byte, and the CLI against a real market.

const MAX_MODULE = 256 * 1024;
let market: TestMarket;
let consumer: Awaited<ReturnType<TestMarket["signUp"]>>;
let consumeToken: string;
let produceToken: string;
let sdk: CycleMarket;
const dir = tempDir("cyclemarket-jobfile-");
const cat = wat(CAT_WAT);
const readFile = wat(READ_FILE_WAT);
const pool = createNodePool({ slots: 4 });
const stopWorker = new AbortController();
let worker: Promise<unknown> | null = null;

const profile = { name: "lab", kind: "opportunistic" as const, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e8, pricePerSecond: 0.001, userAgent: "test" };
const benefit = { kind: "constant" as const, value: 100 };

function writeJob(name: string, job: Record<string, unknown>) {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ name, benefit, workPerTask: 0.01, ...job }, null, 2));
  return path;
}

const cli = (args: string[]) =>
  promisify(execFile)(process.execPath, [join(root, "packages/client/bin/cyclemarket.mjs"), ...args], { cwd: dir, env: { ...process.env, XDG_CONFIG_HOME: join(dir, "config") }, maxBuffer: 1 << 24 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

function startWorker() {
  worker ??= runProducer({ api: createTrpcApi(market.url, produceToken), executor: pool, machine: profile, slots: 4, signal: stopWorker.signal, idleBackoff: { minMs: 50, maxMs: 200 } });
}

beforeAll(async () => {
  market = await startTestMarket({ MAX_MODULE_BYTES: String(MAX_MODULE), LEASE_TIMEOUT_MS: "600000" });
  consumer = await market.signUp("scientist@example.test", ["consumer"]);
  consumeToken = (await consumer.account.tokens.create.mutate({ name: "scripts", scopes: ["consume"] })).token;
  const producer = await market.signUp("lab@example.test", ["producer"]);
  produceToken = (await producer.account.tokens.create.mutate({ name: "fleet" })).token;
  sdk = connect({ url: market.url, token: consumeToken });
  writeFileSync(join(dir, "cat.wasm"), cat);
  writeFileSync(join(dir, "read-file.wasm"), readFile);
});
afterAll(async () => {
  stopWorker.abort();
  await worker;
  await pool.close();
  await market?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("tokens carry scopes", () => {
  it("a consume token submits and reads jobs but cannot run a worker, and no token mints tokens", async () => {
    // A user who both buys and sells: the token, not the roles, is what stops it.
    const both = await market.signUp("both@example.test", ["consumer", "producer"]);
    const mine = market.tokenClient((await both.account.tokens.create.mutate({ name: "scripts", scopes: ["consume"] })).token);
    expect(await mine.jobs.list.query()).toEqual([]);
    expect(await refusal(mine.worker.register.mutate({ ...profile, slots: 1 }))).toMatchObject({ code: "token-scope", needed: "produce", scopes: ["consume"] });
    expect(await refusal(mine.account.tokens.create.mutate({ name: "more", scopes: ["consume"] }))).toMatchObject({ code: "token-cannot-mint" });
    const worker = market.tokenClient((await both.account.tokens.create.mutate({ name: "fleet", scopes: ["produce"] })).token);
    expect(await refusal(worker.jobs.list.query())).toMatchObject({ code: "token-scope", needed: "consume" });
    expect(await refusal(worker.account.tokens.create.mutate({ name: "wider", scopes: ["produce", "consume"] }))).toMatchObject({ code: "token-cannot-mint" });
  });

  it("a scope needs its role", async () => {
    const seller = await market.signUp("seller-only@example.test", ["producer"]);
    expect(await refusal(seller.account.tokens.create.mutate({ name: "buy", scopes: ["consume"] }))).toMatchObject({ code: "scope-needs-role", scope: "consume", role: "consumer" });
  });
});

describe("modules are uploaded once, by hash", () => {
  it("stores raw bytes under their SHA-256 and costs nothing the second time", async () => {
    const first = await sdk.uploadModule(cat);
    expect(first).toEqual({ hash: createHash("sha256").update(cat).digest("hex"), uploaded: true });
    expect(await sdk.uploadModule(cat)).toEqual({ hash: first.hash, uploaded: false });
    // The raw route itself also keeps what it has.
    const again = await fetch(`${market.url}/api/modules`, { method: "PUT", headers: { authorization: `Bearer ${consumeToken}` }, body: new Uint8Array(cat) });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ hash: first.hash, size: cat.length, stored: false });
    expect(await market.manager.services.db.module.count()).toBe(1);
  });

  it("refuses a module over the limit with the limit and the size, not a stack", async () => {
    const res = await fetch(`${market.url}/api/modules`, { method: "PUT", headers: { authorization: `Bearer ${consumeToken}` }, body: new Uint8Array(paddedModule(MAX_MODULE + 1)) });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: { data: { reason: unknown; stack?: unknown } } };
    expect(body.error.data.reason).toEqual({ code: "module-too-large", bytes: MAX_MODULE + 1, maxBytes: MAX_MODULE });
    expect(body.error.data.stack).toBeUndefined();
    const big = join(dir, "big.wasm");
    writeFileSync(big, paddedModule(MAX_MODULE + 1));
    const e = await sdk.submit(writeJob("too big", { module: "big.wasm", tasks: [{ args: [] }] })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(MarketError);
    expect((e as MarketError).reason).toMatchObject({ code: "module-too-large" });
    expect((e as MarketError).message).toContain("the limit is 256.0 KiB".replace("256.0 KiB", "262,144 bytes"));
  });

  it("refuses a job naming a module the market does not hold", async () => {
    const request = { name: "ghost", benefit, source: { kind: "module" as const, moduleHash: "0".repeat(64), tasks: [{}] } };
    expect(await refusal(market.tokenClient(consumeToken).jobs.submit.mutate(request))).toMatchObject({ code: "module-unknown", hash: "0".repeat(64) });
  });
});

describe("input file names may not leave the task's folder", () => {
  const named = (name: string) => ({
    name: "escape",
    benefit,
    source: { kind: "module" as const, moduleHash: createHash("sha256").update(cat).digest("hex"), tasks: [{ files: { "ok.txt": "aGk=" } }, { files: { [name]: "aGk=" } }] },
  });
  it.each([
    ["../etc/passwd", "parent"],
    ["data/../../x", "parent"],
    ["/etc/passwd", "absolute"],
    ["a\0b", "nul"],
    ["..\\x", "backslash"],
  ])("refuses %j (%s) with the task and the reason", async (name, problem) => {
    expect(await refusal(market.tokenClient(consumeToken).jobs.submit.mutate(named(name)))).toMatchObject({ code: "file-name-refused", task: 1, name, problem });
  });

  it("the SDK refuses the same before sending anything", async () => {
    writeFileSync(join(dir, "x.txt"), "x");
    const e = await sdk.submit(writeJob("escape", { module: "cat.wasm", tasks: [{ files: { "../x.txt": "x.txt" } }] })).catch((x: unknown) => x);
    expect((e as MarketError).reason).toMatchObject({ code: "input-file-name-refused", name: "../x.txt", problem: "parent" });
    expect((e as MarketError).message).toContain("would leave the task's folder");
  });
});

describe("a job file's env, files and limits reach the lease", () => {
  it("stores them per task and hands them out with the job's own limits", async () => {
    mkdirSync(join(dir, "inputs"), { recursive: true });
    writeFileSync(join(dir, "inputs", "0.txt"), "zero");
    writeFileSync(join(dir, "inputs", "1.txt"), "one");
    const api = createTrpcApi(market.url, produceToken);
    const { machineId } = await api.register({ ...profile, name: "inspector", slots: 2 });
    const job = await sdk.submit(
      writeJob("leases", { module: "read-file.wasm", limits: { memoryMb: 32, wallSeconds: 5 }, tasks: { count: 2, args: ["{i}"], env: { TASK: "t{i}" }, files: { "data/in.txt": "inputs/{i}.txt" } } }),
    );
    expect(job.decision?.outcome).toBe("admitted");
    const { leases } = await api.lease({ machineId, max: 2 });
    const seen = leases.map((l) => ({ args: l.args, env: l.env, files: l.files, limits: l.limits })).sort((a, b) => a.args[0]!.localeCompare(b.args[0]!));
    expect(seen).toEqual([
      { args: ["0"], env: { TASK: "t0" }, files: { "data/in.txt": Buffer.from("zero").toString("base64") }, limits: { wallMs: 5000, memoryPages: 512, outputBytes: 1 << 20 } },
      { args: ["1"], env: { TASK: "t1" }, files: { "data/in.txt": Buffer.from("one").toString("base64") }, limits: { wallMs: 5000, memoryPages: 512, outputBytes: 1 << 20 } },
    ]);
    await job.cancel();
    await api.depart({ machineId });
  });
});

describe("outputs come back byte for byte", () => {
  it("binary stdout through the API, the per-task download and the job's archive", async () => {
    startWorker();
    // Every byte value, and sequences that are not UTF-8, as stdin from files; cat echoes them.
    const inputs = Array.from({ length: 6 }, (_, i) => Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, i]), randomBytes(1000 + i * 500), Buffer.from(Array.from({ length: 256 }, (_, b) => b))]));
    inputs.forEach((b, i) => writeFileSync(join(dir, "inputs", `bin-${i}`), b));
    const job = await sdk.submit(writeJob("binary", { module: "cat.wasm", tasks: { count: inputs.length, stdin: { file: "inputs/bin-{i}" } } }));
    const final = await job.wait();
    expect(final.status).toBe("completed");

    const outputs = [];
    for await (const o of job.results()) outputs.push(o);
    expect(outputs.map((o) => o.index).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5]);
    for (const o of outputs) {
      expect(Buffer.from(o.stdout).equals(inputs[o.index]!)).toBe(true);
      expect(o.outputHash).toBe(createHash("sha256").update(inputs[o.index]!).digest("hex"));
    }
    const page = await market.tokenClient(consumeToken).jobs.outputs.query({ jobId: job.id });
    expect(page[0]!.stdoutText).toBeNull(); // binary is not passed off as text

    const auth = { authorization: `Bearer ${consumeToken}` };
    for (const [i, input] of inputs.entries()) {
      const res = await fetch(`${market.url}/api/jobs/${job.id}/tasks/${i}/stdout`, { headers: auth });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(input)).toBe(true);
    }
    const tar = untar(new Uint8Array(await (await fetch(`${market.url}/api/jobs/${job.id}/archive.tar`, { headers: auth })).arrayBuffer()));
    for (const [i, input] of inputs.entries()) expect(tar.get(`${i}.out`)?.equals(input)).toBe(true);
    const manifest = JSON.parse(tar.get("results.json")!.toString("utf8")) as { tasks: { index: number; outputHash: string; exitCode: number }[] };
    expect(manifest.tasks.map((t) => t.exitCode)).toEqual([0, 0, 0, 0, 0, 0]);

    // Someone else's token is told there is no such job.
    const other = await market.signUp("stranger@example.test", ["consumer"]);
    const theirs = (await other.account.tokens.create.mutate({ name: "x", scopes: ["consume"] })).token;
    expect((await fetch(`${market.url}/api/jobs/${job.id}/archive.tar`, { headers: { authorization: `Bearer ${theirs}` } })).status).toBe(404);
  });

  it("input files reach the program in the sandbox", async () => {
    startWorker();
    const job = await sdk.submit(writeJob("files", { module: "read-file.wasm", tasks: { count: 2, files: { "data/in.txt": "inputs/{i}.txt" } } }));
    expect((await job.wait()).status).toBe("completed");
    const texts = [];
    for await (const o of job.allOutputs()) texts.push(Buffer.from(o.stdout).toString());
    expect(texts).toEqual(["zero", "one"]);
  });
});

describe("following a job and running it again", () => {
  it("streams each task's output as it is accepted and the job's progress, both ending with the job", async () => {
    startWorker();
    const job = await sdk.submit(writeJob("streamed", { module: "cat.wasm", tasks: { count: 8, stdin: "out {i}\n" } }));
    const statuses: string[] = [];
    const following = (async () => {
      for await (const p of job.progress()) statuses.push(`${p.status} ${p.tasksDone}`);
    })();
    const seen: [number, string][] = [];
    for await (const o of job.results()) seen.push([o.index, Buffer.from(o.stdout).toString()]);
    await following;
    expect(seen.sort((a, b) => a[0] - b[0])).toEqual(Array.from({ length: 8 }, (_, i) => [i, `out ${i}\n`]));
    expect(statuses.at(-1)).toBe("completed 8");
    // A stream opened after the end sends every output, then ends; one resumed from an event id
    // sends from that task on.
    const after: number[] = [];
    for await (const o of job.results()) after.push(o.index);
    expect(after.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const resumed = await new Promise<unknown[]>((resolve, reject) => {
      const got: unknown[] = [];
      const sub = market.tokenClient(consumeToken).jobs.streamOutputs.subscribe(
        { jobId: job.id, lastEventId: "6" },
        { onData: (e) => got.push(e.data.kind === "output" ? e.data.output.index : e.data.kind), onComplete: () => (sub.unsubscribe(), resolve(got)), onError: reject },
      );
    });
    expect(resumed).toEqual([6, 7, "end"]);
  });

  it("another user cannot follow the job", async () => {
    const job = await sdk.submit(writeJob("private", { module: "cat.wasm", tasks: [{ stdin: "x" }] }));
    const other = await market.signUp("watcher@example.test", ["consumer"]);
    const theirs = connect({ url: market.url, token: (await other.account.tokens.create.mutate({ name: "x", scopes: ["consume"] })).token });
    const e = await (async () => {
      for await (const _ of theirs.job(job.id).results()) return null;
    })().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(MarketError);
    expect((e as MarketError).status).toBe(404);
    await job.wait();
  });

  it("reads a job back as its job file: the module by hash, binary stdin as base64; submitted again it runs the same", async () => {
    startWorker();
    const binary = Buffer.from([0, 1, 2, 0xff, 0xfe, 10]);
    writeFileSync(join(dir, "inputs", "again.bin"), binary);
    const first = await sdk.submit(
      writeJob("again", {
        module: "read-file.wasm",
        limits: { memoryMb: 16, wallSeconds: 7 },
        tasks: [{ args: ["x y"], stdin: { file: "inputs/again.bin" }, files: { "data/in.txt": "inputs/0.txt" } }, { args: ["2"], stdin: "text", env: { A: "1" }, files: { "data/in.txt": { text: "inline" } } }],
      }),
    );
    const file = await first.jobFile();
    expect(file).toEqual({
      name: "again",
      module: { sha256: createHash("sha256").update(readFile).digest("hex") },
      benefit,
      replicas: 1,
      workPerTask: 0.01,
      limits: { memoryMb: 16, wallSeconds: 7 },
      tasks: [
        { args: ["x y"], stdin: { base64: binary.toString("base64") }, files: { "data/in.txt": { text: "zero" } } },
        { args: ["2"], stdin: "text", env: { A: "1" }, files: { "data/in.txt": { text: "inline" } } },
      ],
    });
    const modules = await market.manager.services.db.module.count();
    // The CLI prints the same job file; submitted as it is, it needs no upload and gives the same outputs.
    const printed = await cli(["jobfile", first.id, "--url", market.url, "--token", consumeToken]);
    expect(JSON.parse(printed.stdout)).toEqual(file);
    writeFileSync(join(dir, "again-2.json"), printed.stdout);
    const run = await cli(["submit", "again-2.json", "--wait", "--url", market.url, "--token", consumeToken]);
    expect(run.code).toBe(0);
    const second = connect({ url: market.url, token: consumeToken }).job(/Job ([0-9a-f-]{36})/.exec(run.stdout)![1]!);
    await first.wait();
    const outputs = async (job: typeof first) => {
      const all = [];
      for await (const o of job.allOutputs()) all.push([o.index, Buffer.from(o.stdout).toString("hex")]);
      return all;
    };
    expect(await outputs(second)).toEqual(await outputs(first));
    expect(await market.manager.services.db.module.count()).toBe(modules);
  });
});

describe("the cyclemarket CLI", () => {
  it("submits a generated 1,000-task job file over HTTP, waits, and writes every output", async () => {
    startWorker();
    const count = 1000;
    // A megabyte each: the engine counts the memory of every task placed on a machine.
    const path = writeJob("thousand", { module: "cat.wasm", limits: { memoryMb: 1, wallSeconds: 10 }, tasks: { count, stdin: "task {i}\n" } });
    const out = join(dir, "thousand-out");
    const started = Date.now();
    const run = await cli(["submit", path, "--url", market.url, "--token", consumeToken, "--wait", "--out", out]);
    const seconds = (Date.now() - started) / 1000;
    expect(run.stderr).not.toContain("Error");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/admitted/);
    expect(run.stdout).toContain("1000/1000 tasks done");
    const files = readdirSync(out);
    expect(files.filter((f) => f.endsWith(".out"))).toHaveLength(1000);
    for (const i of [0, 1, 499, 999]) expect(readFileSync(join(out, `${i}.out`), "utf8")).toBe(`task ${i}\n`);
    const manifest = JSON.parse(readFileSync(join(out, "results.json"), "utf8")) as { tasks: { index: number; machine: string }[] };
    expect(manifest.tasks.map((t) => t.index)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(manifest.tasks[0]!.machine).toBe("lab");
    console.log(`${count}-task job through the CLI: ${seconds.toFixed(1)} s`);
    // The module was uploaded by the first job that named it: the market still holds one copy.
    expect(await market.manager.services.db.module.count()).toBe(2);
  }, 480_000);

  it("says what is wrong, with exit status 2 for a bad job file and 4 for an unknown token", async () => {
    const typo = writeJob("typo", { module: "cat.wasm", tasks: [{ arg: ["1"] }] });
    const bad = await cli(["submit", typo, "--url", market.url, "--token", consumeToken]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not a valid job file: tasks/);
    const nobody = await cli(["status", "00000000-0000-4000-8000-000000000000", "--url", market.url, "--token", "cmk_nobody"]);
    expect(nobody.code).toBe(4);
    const missing = await cli(["submit", join(dir, "nope.json"), "--url", market.url, "--token", consumeToken]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("Cannot read the job file");
  });

  it("logs in, keeps a consume token in the config folder (0600), then needs no flags", async () => {
    const signedUp = await market.signUp("cli@example.test", ["consumer"]);
    void signedUp;
    const login = await cli(["login", "--url", market.url, "--email", "cli@example.test", "--password", "correct horse battery"]);
    expect(login.code).toBe(0);
    const file = join(dir, "config", "cyclemarket", "config.json");
    const { statSync } = await import("node:fs");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const quote = await cli(["quote", writeJob("quoted", { module: "cat.wasm", tasks: [{ stdin: "hi" }] })]);
    expect(quote.code).toBe(0);
    expect(quote.stdout).toMatch(/Would be admitted now: price [\d.]+ credits/);
    await waitFor("nothing", async () => true, 1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { CAT_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { Output, root, tempDir } from "../support/processes.ts";
import { untar } from "../support/tar.ts";

// Installing from the market itself, as a newcomer would on a machine with only Node: in a folder
// outside the repository, `npx --yes URL/downloads/cyclemarket-worker.tgz` starts a worker, and
// `npm install URL/downloads/cyclemarket-client.tgz` gives a project the SDK (used from a plain
// .mjs file, and type-checked from a .ts file with skipLibCheck off) and the cyclemarket CLI.

let market: TestMarket;
let consumeToken: string;
let produceToken: string;
const dir = tempDir("cyclemarket-install-");
// npx keeps what it installs under its cache, by URL: a cache of the test's own, removed with it.
const npmEnv = { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false", npm_config_loglevel: "error" };
let worker: ChildProcess | null = null;

const run = (cmd: string, args: string[], env: NodeJS.ProcessEnv = npmEnv) =>
  promisify(execFile)(cmd, args, { cwd: dir, env, maxBuffer: 1 << 24, timeout: 180_000 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

beforeAll(async () => {
  // What `npm ci` and `npm start` do: pack both (each skips when its tarball is newer than its sources).
  for (const script of ["apps/worker-runtime/scripts/pack.mjs", "packages/client/scripts/pack.mjs"]) execFileSync(process.execPath, [join(root, script)], { cwd: root });
  market = await startTestMarket();
  const consumer = await market.signUp("newcomer@example.test", ["consumer"]);
  consumeToken = (await consumer.account.tokens.create.mutate({ name: "scripts", scopes: ["consume"] })).token;
  const producer = await market.signUp("server@example.test", ["producer"]);
  produceToken = (await producer.account.tokens.create.mutate({ name: "spare server", scopes: ["produce"] })).token;
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "my-project", private: true, type: "module" }));
  writeFileSync(join(dir, "cat.wasm"), wat(CAT_WAT));
  writeFileSync(
    join(dir, "job.json"),
    JSON.stringify({ name: "echo", module: "cat.wasm", benefit: { kind: "constant", value: 20 }, workPerTask: 0.01, tasks: [0, 1, 2].map((i) => ({ args: [], stdin: `line ${i}\n` })) }),
  );
}, 240_000);

afterAll(async () => {
  if (worker?.pid && worker.exitCode === null) {
    process.kill(-worker.pid, "SIGINT");
    await new Promise((resolve) => worker!.once("exit", resolve));
  }
  await market?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("the market serves its own packages", () => {
  it("as npm tarballs at /downloads, the worker's needing nothing from a registry", async () => {
    const res = await fetch(`${market.url}/downloads/cyclemarket-worker.tgz`);
    expect(res.status).toBe(200);
    const files = untar(gunzipSync(Buffer.from(await res.arrayBuffer())));
    expect([...files.keys()].sort()).toEqual(["package/README.md", "package/bin/worker.mjs", "package/dist/cli/worker.mjs", "package/dist/pool-thread.mjs", "package/package.json"]);
    const manifest = JSON.parse(files.get("package/package.json")!.toString());
    expect(manifest).toMatchObject({ name: "cyclemarket-worker", bin: { "cyclemarket-worker": "bin/worker.mjs" } });
    expect(manifest.dependencies).toBeUndefined();
    // Asked again with what npm's cache holds, the market says it has not changed.
    const again = await fetch(`${market.url}/downloads/cyclemarket-worker.tgz`, { headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);

    const client = untar(gunzipSync(Buffer.from(await (await fetch(`${market.url}/downloads/cyclemarket-client.tgz`)).arrayBuffer())));
    expect(JSON.parse(client.get("package/package.json")!.toString())).toMatchObject({ name: "@cyclemarket/client", bin: { cyclemarket: "bin/cyclemarket.mjs" }, dependencies: { zod: expect.any(String) } });
    expect(JSON.parse(client.get("package/package.json")!.toString()).dependencies).toEqual({ zod: expect.any(String) });
    expect((await fetch(`${market.url}/downloads/cyclemarket-nothing.tgz`)).status).toBe(404);
  });

  it("npx --yes URL/downloads/cyclemarket-worker.tgz starts a worker that joins the market and says where tokens are made", async () => {
    const npxEnv = { ...npmEnv, npm_config_cache: join(dir, "npm-cache") };
    const help = await run("npx", ["--yes", `${market.url}/downloads/cyclemarket-worker.tgz`, "--help"], npxEnv);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("made on the market's\n                     Account page");
    // Its own process group, so the test can stop npx and the worker it started together.
    worker = spawn("npx", ["--yes", `${market.url}/downloads/cyclemarket-worker.tgz`, "--url", market.url, "--token", produceToken, "--slots", "2", "--name", "installed-worker"], {
      cwd: dir,
      env: npxEnv,
      detached: true,
    });
    const out = new Output(worker, "worker");
    await out.next(/registered as machine [0-9a-f-]+ with 2 slots/, 120_000);
  }, 180_000);

  it("npm install URL/downloads/cyclemarket-client.tgz gives an empty project the SDK and the CLI, without a TypeScript compiler", async () => {
    const install = await run("npm", ["install", "--prefer-offline", `${market.url}/downloads/cyclemarket-client.tgz`]);
    expect(install.code, install.stderr).toBe(0);
    // The package and its one dependency: no tRPC, no TypeScript compiler.
    expect(readdirSync(join(dir, "node_modules")).filter((n) => !n.startsWith(".")).sort()).toEqual(["@cyclemarket", "zod"]);
    expect(existsSync(join(dir, "node_modules", "typescript"))).toBe(false);

    // A plain ES module run by node: submit the job file, wait for it, read every output.
    writeFileSync(
      join(dir, "run.mjs"),
      `import { connect } from "@cyclemarket/client";
const market = connect({ url: process.env.MARKET_URL, token: process.env.MARKET_TOKEN });
const job = await market.submit("job.json");
const final = await job.wait();
const outputs = [];
for await (const o of job.allOutputs()) outputs.push({ index: o.index, text: new TextDecoder().decode(o.stdout), machine: o.machine });
console.log(JSON.stringify({ decision: job.decision.outcome, status: final.status, outputs }));
`,
    );
    const script = await run(process.execPath, ["run.mjs"], { ...npmEnv, MARKET_URL: market.url, MARKET_TOKEN: consumeToken });
    expect(script.code, script.stderr).toBe(0);
    const result = JSON.parse(script.stdout);
    expect(result).toMatchObject({ decision: "admitted", status: "completed" });
    // Run by the worker npx started.
    expect(result.outputs).toEqual([0, 1, 2].map((i) => ({ index: i, text: `line ${i}\n`, machine: "installed-worker" })));

    const cli = await run(join(dir, "node_modules", ".bin", "cyclemarket"), ["quote", "job.json", "--url", market.url, "--token", consumeToken]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/admitted/i);
  }, 240_000);

  it("a .ts file using the SDK passes tsc --noEmit there, with skipLibCheck off and neither Node's types nor the repository's", async () => {
    writeFileSync(
      join(dir, "use.ts"),
      `import { connect, JobFile, MarketError, type JobView, type Quote, type TaskOutput } from "@cyclemarket/client";
import { JOB_LIMITS } from "@cyclemarket/client/job-file";

export async function firstLine(url: string, token: string): Promise<string> {
  const market = connect({ url, token });
  const quote: Quote = await market.quote("job.json");
  if (quote.outcome !== "admitted") throw new MarketError("refused", "not admitted");
  const job = await market.submit({ job: JobFile.parse({ name: "x", module: "cat.wasm", benefit: { kind: "constant", value: 5 }, tasks: { count: 2, args: [] } }), dir: "." });
  const view: JobView = await job.wait({ onProgress: (p) => p.tasksDone });
  for await (const out of job.results()) {
    const first: TaskOutput = out;
    return new TextDecoder().decode(first.stdout) + view.status + JOB_LIMITS.tasksPerJob;
  }
  return quote.price.toFixed(3);
}
`,
    );
    // zod's own declarations use the URL global, which both a browser's and Node's types give.
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], types: [], skipLibCheck: false, noEmit: true }, files: ["use.ts"] }),
    );
    const tsc = await run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", dir]);
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.code).toBe(0);
    // Nothing the project reads names the repository's packages.
    const types = join(dir, "node_modules", "@cyclemarket", "client", "dist", "types");
    for (const file of readdirSync(types, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".d.ts"))) {
      expect(readFileSync(join(types, file), "utf8"), relative(dir, join(types, file))).not.toMatch(/@cyclemarket\/(market-manager|costbenefit|worker-runtime)|@trpc/);
    }
  }, 120_000);
});

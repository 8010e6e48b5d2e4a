// `npm run bench:sandbox`: prints (1) the sandbox's time against Node's own WASI host for a
// CPU-heavy module, both on this thread (goal: at most 1.05x); (2) the time a trivial task takes
// through a one-slot Node pool, i.e. the per-task overhead; (3) how long a pool thread takes to
// be ready, next to an empty worker thread on the same machine. Figures, not pass/fail: the
// machine's load moves them.
import { openSync } from "node:fs";
import { WASI } from "node:wasi";
import { Worker } from "node:worker_threads";
import { THREAD_ENTRY, createNodePool } from "../src/node/pool.ts";
import { compileTaskModule, runTask, sha256Hex } from "../src/sandbox.ts";
import { wasiProgram } from "../src/testing/wasi-programs.ts";
import { wat } from "../src/testing/fixtures.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TRIVIAL_TASKS = Number(process.env.BENCH_TASKS ?? 300);
const THREAD_STARTS = Number(process.env.BENCH_THREADS ?? 20);
const MEMORY_PAGES = 4096;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(2)} ms`;

async function cpuHeavy(): Promise<void> {
  const bytes = wasiProgram("bench_cpu");
  const args = ["2"];
  const sandboxModule = await compileTaskModule(bytes, MEMORY_PAGES);
  const referenceModule = await WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>);
  // Explicit descriptors: Node's WASI host crashes on some kinds of inherited stdin.
  const devNullIn = openSync("/dev/null", "r");
  const devNull = openSync("/dev/null", "w");
  let expected = "";

  // Both timings cover instantiation and the run, from an already compiled module.
  const reference = async () => {
    const t = performance.now();
    const wasi = new WASI({ version: "preview1", args: ["task.wasm", ...args], env: {}, stdin: devNullIn, stdout: devNull, returnOnExit: true });
    const instance = await WebAssembly.instantiate(referenceModule, wasi.getImportObject() as WebAssembly.Imports);
    wasi.start(instance);
    return performance.now() - t;
  };
  const sandbox = async () => {
    const t = performance.now();
    const r = await runTask({ module: sandboxModule, args, seed: "bench", limits: { memoryPages: MEMORY_PAGES, outputBytes: 1 << 16 } });
    const elapsed = performance.now() - t;
    const out = new TextDecoder().decode(r.stdout);
    if (r.error || (expected && out !== expected)) throw new Error(`the benchmark module failed in the sandbox: ${r.error?.message ?? out}`);
    expected = out;
    return elapsed;
  };

  await reference();
  await sandbox();
  const ref: number[] = [];
  const box: number[] = [];
  // Alternate so a change in the machine's load falls on both alike.
  for (let i = 0; i < ROUNDS; i++) {
    ref.push(await reference());
    box.push(await sandbox());
  }
  const ratio = median(box) / median(ref);
  console.log(`cpu-heavy module (bench_cpu 2, ${ROUNDS} rounds, medians): node:wasi ${ms(median(ref))}, sandbox ${ms(median(box))}, ratio ${ratio.toFixed(3)}x (goal <= 1.05x)`);
}

async function trivialTasks(): Promise<void> {
  const module = wat(`(module (memory (export "memory") 1) (func (export "_start")))`);
  const moduleHash = await sha256Hex(module);
  const pool = createNodePool({ slots: 1 });
  const request = { moduleHash, module, args: [], seed: "trivial", limits: { wallMs: 10_000, memoryPages: 16, outputBytes: 1024 } };
  for (let i = 0; i < 20; i++) await pool.run(request); // thread started, module compiled and cached
  const times: number[] = [];
  for (let i = 0; i < TRIVIAL_TASKS; i++) {
    const t = performance.now();
    const r = await pool.run(request);
    times.push(performance.now() - t);
    if (r.error) throw new Error(`trivial task failed: ${r.error.message}`);
  }
  await pool.close();
  const inProcess: number[] = [];
  const compiled = await compileTaskModule(module, 16);
  for (let i = 0; i < TRIVIAL_TASKS; i++) {
    const t = performance.now();
    await runTask({ module: compiled, args: [], seed: "trivial", limits: { memoryPages: 16, outputBytes: 1024 } });
    inProcess.push(performance.now() - t);
  }
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  console.log(
    `trivial task, one slot (${TRIVIAL_TASKS} in a row): p50 ${ms(median(times))}, mean ${ms(mean)} per task through the pool; ${ms(median(inProcess))} of it is the sandbox itself (p50 on this thread)`,
  );
}

async function threadStart(entry: URL): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < THREAD_STARTS; i++) {
    const t = performance.now();
    const worker = new Worker(entry);
    await new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    times.push(performance.now() - t);
    await worker.terminate();
  }
  return times;
}

async function threadStarts(): Promise<void> {
  const empty = new URL(`data:text/javascript,${encodeURIComponent('import { parentPort } from "node:worker_threads"; parentPort.postMessage("ready");')}`);
  const pool = await threadStart(THREAD_ENTRY);
  const baseline = await threadStart(empty);
  console.log(
    `thread start (${THREAD_STARTS} starts, new Worker to "ready"): pool thread p50 ${ms(median(pool))} (min ${ms(Math.min(...pool))}); an empty worker thread p50 ${ms(median(baseline))} (min ${ms(Math.min(...baseline))}) (goal < 50 ms)`,
  );
}

await cpuHeavy();
await trivialTasks();
await threadStarts();

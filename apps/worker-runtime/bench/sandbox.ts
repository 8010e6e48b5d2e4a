// `npm run bench:sandbox`: prints (1) the sandbox's time against Node's own WASI host for a
// CPU-heavy module, both on this thread (goal: at most 1.05x); (2) the time a trivial task takes
// through a one-slot Node pool, i.e. the per-task overhead; (3) how long a pool thread takes to
// be ready, next to an empty worker thread on the same machine, and how long a slot whose thread
// was stopped at its wall time waits before its next task runs (with the pool's spare thread and
// without); (4) what a CPU limit costs a paced module (wasm-pace.ts): its time at a limit of 100%
// against the same module unpaced, and the share of a core it uses at 50%. Figures, not
// pass/fail: the machine's load moves them.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { createNodePool, startSandboxThread } from "../src/node/pool.ts";
import { compileTaskModule, runTask, sha256Hex } from "../src/sandbox.ts";
import { LOOP_WAT, wat } from "../src/testing/fixtures.ts";
import { SlotPacer } from "../src/controls/pacer.ts";
import { readFileSync } from "node:fs";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TRIVIAL_TASKS = Number(process.env.BENCH_TASKS ?? 300);
const THREAD_STARTS = Number(process.env.BENCH_THREADS ?? 20);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(2)} ms`;

const RUN_ONCE = fileURLToPath(new URL("./run-once.ts", import.meta.url));
const CPU_MODULE = fileURLToPath(new URL("../wasi-tests/build/bench_cpu.wasm", import.meta.url));

/** One round in a fresh process (see run-once.ts): its own timing of compile, instantiate and run. */
function runOnce(host: "sandbox" | "reference", args: string[]): { ms: number; stdout: string } {
  const r = spawnSync(process.execPath, ["--no-warnings", "--import", "tsx", RUN_ONCE, host, CPU_MODULE, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0) throw new Error(`${host} round failed (${r.status ?? r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout) as { ms: number; stdout: string };
}

async function cpuHeavy(): Promise<void> {
  const args = ["2"];
  const ref: number[] = [];
  const box: number[] = [];
  // Alternate so a change in the machine's load falls on both alike.
  for (let i = 0; i < ROUNDS; i++) {
    ref.push(runOnce("reference", args).ms);
    const sandbox = runOnce("sandbox", args);
    if (!/^\d+ \d+$/.test(sandbox.stdout)) throw new Error(`unexpected benchmark output ${JSON.stringify(sandbox.stdout)}`);
    box.push(sandbox.ms);
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

async function threadStart(start: () => Worker): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < THREAD_STARTS; i++) {
    const t = performance.now();
    const worker = start();
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
  const pool = await threadStart(() => startSandboxThread());
  const baseline = await threadStart(() => new Worker(empty, { execArgv: [] }));
  console.log(
    `thread start (${THREAD_STARTS} starts, new Worker to "ready"): pool thread p50 ${ms(median(pool))} (min ${ms(Math.min(...pool))}); an empty worker thread p50 ${ms(median(baseline))} (min ${ms(Math.min(...baseline))}) (goal < 50 ms)`,
  );
}

/** A task stopped at its wall time, then a trivial task on the same slot: how long that one takes. */
async function afterTimeout(spareThread: boolean): Promise<number[]> {
  const trivial = wat(`(module (memory (export "memory") 1) (func (export "_start")))`);
  const loop = wat(LOOP_WAT);
  const limits = { memoryPages: 16, outputBytes: 1024 };
  const task = { moduleHash: await sha256Hex(trivial), module: trivial, args: [], seed: "next", limits: { ...limits, wallMs: 10_000 } };
  const runaway = { moduleHash: await sha256Hex(loop), module: loop, args: [], seed: "loop", limits: { ...limits, wallMs: 50 } };
  const pool = createNodePool({ slots: 1, spareThread });
  await pool.run(task); // threads loaded, module compiled
  const times: number[] = [];
  for (let i = 0; i < THREAD_STARTS / 2; i++) {
    await new Promise((r) => setTimeout(r, 500)); // time for the next spare to load
    if ((await pool.run(runaway)).error?.code !== "timeout") throw new Error("the runaway task was not stopped");
    const t = performance.now();
    const r = await pool.run(task);
    times.push(performance.now() - t);
    if (r.error) throw new Error(`task after a timeout failed: ${r.error.message}`);
  }
  await pool.close();
  return times;
}

async function replacements(): Promise<void> {
  const spare = await afterTimeout(true);
  const cold = await afterTimeout(false);
  console.log(
    `next task on a slot whose thread was stopped at its wall time (${spare.length} times): p50 ${ms(median(spare))} (max ${ms(Math.max(...spare))}) with the spare thread; p50 ${ms(median(cold))} starting a thread then`,
  );
}

async function pacing(): Promise<void> {
  const bytes = new Uint8Array(readFileSync(CPU_MODULE));
  const limits = { memoryPages: 1024, outputBytes: 1024 };
  const plain = await compileTaskModule(bytes, limits.memoryPages);
  const paced = await compileTaskModule(bytes, limits.memoryPages, true);
  const run = async (module: WebAssembly.Module, cpuLimit: number | null) => {
    const cpu = process.cpuUsage();
    const t = performance.now();
    const r = await runTask({ module, args: ["2"], seed: "pace", limits, ...(cpuLimit === null ? {} : { pacing: new SlotPacer(cpuLimit).cells }) });
    if (r.error) throw new Error(`paced bench failed: ${r.error.message}`);
    const wall = performance.now() - t;
    const used = process.cpuUsage(cpu);
    return { wall, share: (used.user + used.system) / 1000 / wall };
  };
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    a.push((await run(plain, null)).wall);
    b.push((await run(paced, 100)).wall);
  }
  const half = await run(paced, 50);
  console.log(
    `CPU limit inside a task (bench_cpu 2, ${ROUNDS} rounds, medians): unpaced ${ms(median(a))}, paced at 100% ${ms(median(b))} (${(median(b) / median(a)).toFixed(3)}x); at 50% it took ${ms(half.wall)} using ${(half.share * 100).toFixed(0)}% of a core`,
  );
}

await cpuHeavy();
await trivialTasks();
await threadStarts();
await replacements();
await pacing();

// `npm run -s bench:worker-overhead [-- --trivial N --stdin N --stdinKb K --parallel N --threads N --cli --json --verbose --profile]`
//
// What the market costs a task on top of the sandbox's own time, through a real Market Manager
// (its own process and embedded PostgreSQL, bench/harness.ts of the manager) and the Node worker
// (its pool of sandbox threads, its producer loop and its HTTP client, run here as the CLI runs
// them, with the CLI's defaults):
// - trivialOverheadMs: a job of N tasks that do nothing, on a one-slot worker: from the first lease
//   the worker holds to the last report the market accepted, less the time the sandbox itself
//   spent in the tasks (each outcome's elapsedMs), per task;
// - stdinOverheadMs: the same for a job of N tasks that each read K KB of stdin to its end;
// - threadStartMs: how long a pool thread takes from `new Worker` to "ready" (p50);
// - parallelEfficiency: a job of N tasks of 0.1 to 0.6 s each (the montecarlo example, its
//   samples spread evenly over that range) on a two-slot worker: the same tasks' sequential time
//   on this thread with no market (the sandbox alone; half of them before the market's run, half
//   after), divided by two, over the market's wall time from the submission to the last accepted
//   report. 1 is two slots kept busy all along;
// - parallelEfficiencyWithoutMarket: the same tasks on a two-slot pool with no market, the same
//   way: what two slots on this machine allow at all (other load, cores shared), to read the
//   figure above against.
// `--cli` runs each job on the `cyclemarket-worker` command in a process of its own instead, timed
// from its log and the consumer's view of the job (the sandbox's time from the same tasks on a
// one-slot pool here; BENCH_CLI_FLAGS adds Node options to its process, e.g. `--cpu-prof`).
// `--verbose` adds CPU per task and the manager's own time per call and its journal's statements,
// `--profile` the manager's CPU profile of the stdin job (profiles/). A part asked for with 0 is
// left out (null). Figures, not pass/fail: the machine's load moves them.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { mkdirSync } from "node:fs";
import { freemem, totalmem } from "node:os";
import { args, consumer, print, producerToken, profileFile, round, startBenchManager, type BenchManager, type Consumer } from "../../market-manager/bench/harness.ts";
import { createNodePool, startSandboxThread } from "../src/node/pool.ts";
import { createTrpcApi } from "../src/node/trpc-api.ts";
import { runProducer, type ProducerEvent } from "../src/producer.ts";
import { compileTaskModule, runTask, sha256Hex } from "../src/sandbox.ts";
import { exampleBytes, wat } from "../src/testing/fixtures.ts";
import type { WorkerApi } from "../src/api.ts";

const opt = args({ trivial: 1000, stdin: 200, stdinKb: 100, parallel: 100, threads: 20 }, ["verbose", "cli"]);
const say = (line: string) => (opt.json ? process.stderr : process.stdout).write(`${line}\n`);

const TRIVIAL = wat(`(module (memory (export "memory") 1) (func (export "_start")))`);
/** Reads stdin to its end in 63 KiB reads, writes nothing. */
const READ_STDIN = wat(`(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "\\00\\04\\00\\00\\00\\fc\\00\\00")
  (func (export "_start")
    (loop $l
      (br_if $l (i32.and
        (i32.eqz (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (i32.ne (i32.load (i32.const 8)) (i32.const 0)))))))`);
const MONTECARLO = exampleBytes("montecarlo");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base64 = (b: Uint8Array) => Buffer.from(b).toString("base64");

interface JobRun {
  /** First lease held to last report accepted, ms. */
  leasedToDoneMs: number;
  /** Submission sent to last report accepted, ms. */
  submittedToDoneMs: number;
  /** Sum of the sandbox's own time over the job's tasks, ms. */
  sandboxMs: number;
  tasks: number;
  calls: Record<string, { count: number; p50: number; mean: number }>;
}

/** The Node worker as the CLI runs it (node/cli.ts main), with `slots` slots, its events told to `listen`. */
async function startWorker(url: string, token: string, slots: number, listen: (e: ProducerEvent) => void, calls: Map<string, number[]>) {
  const pool = createNodePool({ slots });
  const bench = await pool.benchmark();
  const stop = new AbortController();
  const api = timed(createTrpcApi(url, token), calls);
  const done = runProducer({
    api,
    executor: pool,
    slots,
    signal: stop.signal,
    // Memory per slot as the CLI works it out.
    machine: { name: `overhead-${slots}`, kind: "opportunistic", speed: bench.speed, memoryPerSlotMb: Math.max(16, Math.min(4096, Math.floor(Math.min(freemem(), totalmem() / 2) / 2 ** 20 / slots))), bandwidthBytesPerSecond: 12_500_000, pricePerSecond: 1, userAgent: "bench" },
    onEvent: (e) => {
      if (e.type === "error") say(`worker: ${e.stage}: ${e.message}`);
      listen(e);
    },
  });
  let ready!: () => void;
  const registered = new Promise<void>((r) => (ready = r));
  const first = listen;
  listen = (e) => {
    if (e.type === "stream" && e.state === "live") ready();
    first(e);
  };
  await registered;
  return {
    async stop() {
      stop.abort();
      await done;
      await pool.close();
    },
  };
}

/** The worker's calls, timed by kind. */
function timed(api: WorkerApi, calls: Map<string, number[]>): WorkerApi {
  const wrap =
    <I, O>(kind: string, f: (i: I) => Promise<O>) =>
    async (i: I) => {
      const t = performance.now();
      try {
        return await f(i);
      } finally {
        const list = calls.get(kind) ?? [];
        list.push(performance.now() - t);
        calls.set(kind, list);
      }
    };
  return {
    ...api,
    lease: wrap("lease", api.lease.bind(api)),
    report: wrap("report", api.report.bind(api)),
    ...(api.reportMany ? { reportMany: wrap("reportMany", api.reportMany.bind(api)) } : {}),
    module: wrap("module", api.module.bind(api)),
  };
}

interface Job {
  name: string;
  module: Uint8Array;
  tasks: { args: string[]; stdin?: string }[];
  workPerTask: number;
  memoryMb: number;
}

const submit = async (buyer: Consumer, job: Job) => {
  const { jobId, decision } = await buyer.jobs.submit.mutate({
    name: job.name,
    source: { kind: "upload", moduleBase64: base64(job.module), tasks: job.tasks, workPerTask: job.workPerTask, memoryMbPerTask: job.memoryMb },
    benefit: { kind: "constant", value: 10_000 },
  });
  if (decision.outcome !== "admitted") throw new Error(`job ${job.name} was not admitted: ${JSON.stringify(decision.reasons)}`);
  return jobId;
};

/**
 * --cli: the job run by the `cyclemarket-worker` command in a process of its own. It says when it
 * leased and finished each task (its log), and the consumer's view says when the job completed;
 * the sandbox's time is that of the same tasks on a one-slot pool here.
 */
async function runJobOnCli(buyer: Consumer, manager: BenchManager, token: string, slots: number, job: Job): Promise<JobRun> {
  const child = spawn(process.execPath, [...(process.env.BENCH_CLI_FLAGS?.split(" ").filter(Boolean) ?? []), fileURLToPath(new URL("../bin/worker.mjs", import.meta.url)), "--url", manager.url, "--token", token, "--slots", String(slots), "--name", `overhead-cli-${slots}`], { stdio: ["ignore", "pipe", "inherit"] });
  let live = false;
  let firstLease = Infinity;
  let finished = 0;
  let wake: () => void = () => {};
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (line.includes("listening for work")) live = true;
    else if (line.includes(" leased ")) firstLease = Math.min(firstLease, performance.now());
    else if (line.includes(" finished in ")) finished++;
    wake();
  });
  const waitFor = (test: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const check = () => (test() ? resolve() : child.exitCode !== null ? reject(new Error(`the worker exited with ${child.exitCode}`)) : (wake = check));
      check();
    });
  try {
    await waitFor(() => live);
    const sent = performance.now();
    const id = await submit(buyer, job);
    await waitFor(() => finished >= job.tasks.length);
    // The last report is accepted once the job has completed; asked at once, then every few ms.
    for (;;) {
      const view = await buyer.jobs.get.query({ jobId: id });
      if (view.status === "completed") break;
      if (view.status !== "running" && view.status !== "admitted") throw new Error(`job ${job.name} ended ${view.status}`);
      await new Promise((r) => setTimeout(r, 2));
    }
    const done = performance.now();
    // Only the one-slot jobs' overhead needs it (the two-slot job is timed against its sequential time).
    return { leasedToDoneMs: done - firstLease, submittedToDoneMs: done - sent, sandboxMs: slots === 1 ? await sandboxAlone(job) : NaN, tasks: job.tasks.length, calls: {} };
  } finally {
    child.kill("SIGTERM");
    if (child.exitCode === null) await new Promise((r) => child.once("exit", r));
  }
}

/** The sandbox's own time for a job's tasks on a one-slot pool here (the sum of each run's elapsedMs). */
async function sandboxAlone(job: Job): Promise<number> {
  const pool = createNodePool({ slots: 1 });
  try {
    const moduleHash = await sha256Hex(job.module);
    const limits = { wallMs: 120_000, memoryPages: job.memoryMb * 16, outputBytes: 1 << 20 };
    let total = 0;
    for (const [i, task] of job.tasks.entries()) {
      const r = await pool.run({ moduleHash, module: job.module, args: task.args, stdin: task.stdin ? Buffer.from(task.stdin, "base64") : undefined, seed: `alone-${i}`, limits });
      total += r.elapsedMs;
    }
    return total;
  } finally {
    await pool.close();
  }
}

async function runJob(buyer: Consumer, manager: BenchManager, token: string, slots: number, job: Job): Promise<JobRun> {
  if (opt.cli) return runJobOnCli(buyer, manager, token, slots, job);
  const calls = new Map<string, number[]>();
  let jobId: string | null = null;
  let firstLease = Infinity;
  let lastAccepted = 0;
  let sandboxMs = 0;
  let accepted = 0;
  const early: ProducerEvent[] = [];
  let finished!: () => void;
  const allDone = new Promise<void>((r) => (finished = r));
  const onEvent = (e: ProducerEvent) => {
    if (jobId === null) return void early.push(e);
    if (e.type === "leased") {
      if (e.leases.some((l) => l.jobId === jobId)) firstLease = Math.min(firstLease, performance.now());
    } else if (e.type === "finished" && e.jobId === jobId) {
      sandboxMs += e.elapsedMs;
      if (e.error || e.exitCode !== 0) say(`task ${e.taskId} failed: ${e.error?.code ?? e.exitCode} ${e.error?.message ?? ""}`);
    } else if (e.type === "reported" && e.accepted) {
      lastAccepted = performance.now();
      if (++accepted === job.tasks.length) finished();
    }
  };
  const worker = await startWorker(manager.url, token, slots, (e) => onEvent(e), calls);
  if (opt.verbose) await manager.callsStart();
  let cpu = { worker: process.cpuUsage(), market: manager.cpu() };
  try {
    const sent = performance.now();
    const id = await submit(buyer, job);
    jobId = id;
    // CPU from here on: the job's tasks, not its submission.
    cpu = { worker: process.cpuUsage(), market: manager.cpu() };
    for (const e of early.splice(0)) onEvent(e);
    await allDone;
    if (opt.verbose) {
      const used = process.cpuUsage(cpu.worker);
      const market = manager.cpu();
      const per = (ms: number) => round(ms / job.tasks.length, 3);
      say(
        `${job.name}: CPU per task (ms): this process (the worker, its sandbox threads, the idle consumer) ${per((used.user + used.system) / 1000)}, manager ${per(market.managerMs - cpu.market.managerMs)}, PostgreSQL ${per(market.postgresMs - cpu.market.postgresMs)}`,
      );
      const audit = await manager.audit([id]);
      say(`${job.name}: the manager's time per call ${JSON.stringify(audit.serverMs)}; its journal's ${JSON.stringify(audit.journalMs)}`);
    }
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    return {
      leasedToDoneMs: lastAccepted - firstLease,
      submittedToDoneMs: lastAccepted - sent,
      sandboxMs,
      tasks: job.tasks.length,
      calls: Object.fromEntries([...calls].map(([k, v]) => [k, { count: v.length, p50: round(median(v)), mean: round(sum(v) / v.length) }])),
    };
  } finally {
    await worker.stop();
  }
}

async function threadStartMs(): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < opt.threads; i++) {
    const t = performance.now();
    const worker: Worker = startSandboxThread();
    await new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    times.push(performance.now() - t);
    await worker.terminate();
  }
  return median(times);
}

/** Montecarlo samples per millisecond of the sandbox on this thread, to size tasks of 0.1 to 0.6 s. */
async function montecarloRate(): Promise<number> {
  const module = await compileTaskModule(MONTECARLO, 1024);
  const run = async (samples: number) => {
    const t = performance.now();
    const r = await runTask({ module, args: [String(samples), "0"], seed: "calibrate", limits: { memoryPages: 1024, outputBytes: 1024 } });
    if (r.error) throw new Error(`montecarlo failed: ${r.error.message}`);
    return performance.now() - t;
  };
  await run(1_000_000);
  const samples = 4_000_000;
  return samples / median([await run(samples), await run(samples), await run(samples)]);
}

/** The same tasks on a two-slot pool with no market: what the machine itself allows two slots. */
async function poolMs(tasks: { args: string[] }[]): Promise<number> {
  const pool = createNodePool({ slots: 2 });
  try {
    const moduleHash = await sha256Hex(MONTECARLO);
    const limits = { wallMs: 120_000, memoryPages: 1024, outputBytes: 1024 };
    await pool.run({ moduleHash, module: MONTECARLO, args: ["1000", "0"], seed: "warm", limits }); // compiled and cached
    const t = performance.now();
    const outcomes = await Promise.all(tasks.map((task, i) => pool.run({ moduleHash, module: MONTECARLO, args: task.args, seed: `pool-${i}`, limits })));
    if (outcomes.some((o) => o.error)) throw new Error("a montecarlo task failed on the pool");
    return performance.now() - t;
  } finally {
    await pool.close();
  }
}

async function sequentialMs(tasks: { args: string[] }[]): Promise<number> {
  const module = await compileTaskModule(MONTECARLO, 1024);
  const t = performance.now();
  for (const task of tasks) {
    const r = await runTask({ module, args: task.args, seed: `seq-${task.args[1]}`, limits: { memoryPages: 1024, outputBytes: 1024 } });
    if (r.error) throw new Error(`montecarlo failed: ${r.error.message}`);
  }
  return performance.now() - t;
}

const manager = await startBenchManager();
try {
  const buyer = await consumer(manager, "buyer@overhead.test");
  const token = await producerToken(manager, "seller@overhead.test");
  const perTask = (r: JobRun) => round((r.leasedToDoneMs - r.sandboxMs) / r.tasks);

  // A few tasks first: the manager's and the worker's code compiled for speed, as in a market that has run a while.
  await runJob(buyer, manager, token, 1, { name: "warm-up", module: TRIVIAL, tasks: Array.from({ length: 50 }, (_, i) => ({ args: [String(i)] })), workPerTask: 0.001, memoryMb: 1 });

  let trivialOverheadMs: number | null = null;
  if (opt.trivial > 0) {
    const trivial = await runJob(buyer, manager, token, 1, { name: "trivial", module: TRIVIAL, tasks: Array.from({ length: opt.trivial }, (_, i) => ({ args: [String(i)] })), workPerTask: 0.001, memoryMb: 1 });
    trivialOverheadMs = perTask(trivial);
    say(`trivial: ${opt.trivial} tasks in ${round(trivial.leasedToDoneMs)} ms (sandbox ${round(trivial.sandboxMs)} ms): ${trivialOverheadMs} ms per task beyond the sandbox; calls ${JSON.stringify(trivial.calls)}`);
  }

  let stdinOverheadMs: number | null = null;
  if (opt.stdin > 0) {
    const stdinBytes = opt.stdinKb * 1024;
    const stdinTasks = Array.from({ length: opt.stdin }, (_, i) => {
      const bytes = Buffer.alloc(stdinBytes);
      for (let k = 0; k < bytes.length; k += 4) bytes.writeUInt32LE((Math.imul(i + 1, 2654435761) ^ Math.imul(k, 40503)) >>> 0, k);
      return { args: [String(i)], stdin: bytes.toString("base64") };
    });
    if (opt.profile) await manager.profileStart();
    const stdin = await runJob(buyer, manager, token, 1, { name: "stdin", module: READ_STDIN, tasks: stdinTasks, workPerTask: 0.001, memoryMb: 1 });
    if (opt.profile) {
      mkdirSync("profiles", { recursive: true });
      const file = profileFile("profiles", "worker-overhead-stdin");
      await manager.profileStop(file);
      say(`the manager's profile of the stdin job: ${file}`);
    }
    stdinOverheadMs = perTask(stdin);
    say(`stdin: ${opt.stdin} tasks of ${opt.stdinKb} KB in ${round(stdin.leasedToDoneMs)} ms (sandbox ${round(stdin.sandboxMs)} ms): ${stdinOverheadMs} ms per task beyond the sandbox; calls ${JSON.stringify(stdin.calls)}`);
  }

  let threadStart: number | null = null;
  if (opt.threads > 0) {
    threadStart = round(await threadStartMs());
    say(`thread start: p50 ${threadStart} ms`);
  }

  let parallelEfficiency: number | null = null;
  let withoutMarket: number | null = null;
  if (opt.parallel > 0) {
    const rate = await montecarloRate();
    const parallelTasks = Array.from({ length: opt.parallel }, (_, i) => {
      // Durations spread evenly over 0.1-0.6 s, in an order that mixes long and short.
      const ms = 100 + (500 * ((i * 37) % opt.parallel)) / Math.max(1, opt.parallel - 1);
      return { args: [String(Math.round(ms * rate)), String(i)] };
    });
    // Half the tasks before the market's run and half after the pool's, so a change in the machine's
    // load meanwhile falls on both sides alike.
    const half = Math.floor(parallelTasks.length / 2);
    const sequentialFirst = await sequentialMs(parallelTasks.slice(0, half));
    const parallel = await runJob(buyer, manager, token, 2, { name: "parallel", module: MONTECARLO, tasks: parallelTasks, workPerTask: 0.35, memoryMb: 16 });
    const pooled = await poolMs(parallelTasks);
    const sequential = sequentialFirst + (await sequentialMs(parallelTasks.slice(half)));
    parallelEfficiency = round(sequential / 2 / parallel.submittedToDoneMs, 3);
    withoutMarket = round(sequential / 2 / pooled, 3);
    say(
      `parallel: ${opt.parallel} tasks, sequential on this thread ${round(sequential)} ms, on a 2-slot worker through the market ${round(parallel.submittedToDoneMs)} ms (sandbox ${round(parallel.sandboxMs)} ms): efficiency ${parallelEfficiency}; on a 2-slot pool with no market ${round(pooled)} ms (${withoutMarket}); calls ${JSON.stringify(parallel.calls)}`,
    );
  }

  // A part asked for with 0 (--trivial 0, ...) is left out: null.
  print({ trivialOverheadMs, stdinOverheadMs, threadStartMs: threadStart, parallelEfficiency, parallelEfficiencyWithoutMarket: withoutMarket }, opt.json);
} finally {
  await manager.stop();
}

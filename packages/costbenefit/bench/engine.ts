// npm run -s bench:engine -- --machines M [--queued Q] [--seed S] [--json]
// At 10,000 machines and at M (one row each, in one run): admission latency of 10-task jobs over a
// market whose machines already hold Q x size / M tasks, single-task decisions per second, and the
// process's memory per machine (heap and array buffers, the market's queue included, measured
// against a baseline taken before the market was built). Then what deciding one job of 10,000
// identical tasks costs (a submission at the size limit, asked again while it waits as a delayed
// job), what deciding a small job of 20 identical tasks costs on 1,000 machines (the live market's
// usual submission), and one rebalancing pass of the live market's policy over 1,000 machines.
import v8 from "node:v8";
import vm from "node:vm";
import { commitDecision, createPolicy, createRng, defaultPriceConstant, MarketState, type JobInput, type MachineProfileInput, type Rng } from "../src/index.ts";
import { Job } from "../src/job.ts";
import { percentile } from "../src/sim/stats.ts";
import { intArg, parseArgs, table } from "./args.ts";

const args = parseArgs(process.argv.slice(2));
const M = intArg(args, "machines", 10_000);
if (M < 1) throw new Error("--machines must be at least 1");
// By default as many tasks as the market of old held: 0-3 per machine.
const Q = intArg(args, "queued", Math.round(1.5 * M));
const seed = intArg(args, "seed", 1);
const json = args.json === true;
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const H = 3600;

function machines(rng: Rng, n: number): MachineProfileInput[] {
  const slots = [1, 2, 4, 8, 16];
  return Array.from({ length: n }, (_, i) => {
    const speed = Math.exp(rng.uniform(Math.log(0.3), Math.log(3)));
    const common = { id: `machine-${i}`, slots: slots[rng.int(slots.length)]!, speed, memoryPerSlotMb: 256 * 2 ** rng.int(5), bandwidthBytesPerSecond: 1e6 * 2 ** rng.int(8), reputation: rng.uniform(0.8, 1) };
    return rng.next() < 0.7
      ? { ...common, kind: "opportunistic" as const, pricePerSecond: speed * rng.uniform(0.001, 0.02) }
      : { ...common, kind: "dedicated" as const, contractPrice: 100, departureAt: 1e9 };
  });
}

let taskSeq = 0;
function job(rng: Rng, id: string, tasks: number, now: number): Job {
  const input: JobInput = {
    id, arrivedAt: now, benefit: { kind: "linear-decay", value: 2000 * tasks, start: 1800, end: 7200, floor: 0 },
    tasks: Array.from({ length: tasks }, () => ({ id: `t${taskSeq++}`, work: rng.uniform(10, 600), memoryMb: rng.uniform(0, 512), bytes: rng.uniform(1e5, 1e7) })),
  };
  return Job.parse(input);
}

/**
 * A market whose machines carry `queued` tasks in all, on average: 0 to twice the mean each (0-3
 * by default, as this bench always drew them), the first ones running, each up to a quarter of the
 * horizon's work, so a longer queue is a fuller market, most of whose machines cannot take more
 * work within the horizon.
 */
function build(rng: Rng, profiles: MachineProfileInput[], queued: number): MarketState {
  const prices = profiles.map((p) => (p.kind === "opportunistic" ? p.pricePerSecond : 0));
  const s = new MarketState({ horizonSeconds: H, priceConstant: defaultPriceConstant(prices, H), linkBytesPerSecond: 1e10 });
  for (const p of profiles) s.upsertMachine(p, 0);
  const most = 2 * (queued / profiles.length) + 1;
  for (const p of profiles) {
    const k = Math.floor(rng.uniform(0, most));
    for (let i = 0; i < k; i++) {
      const id = `bg${taskSeq++}`;
      s.assignTask({ id, jobId: "background", work: rng.uniform(1, 0.25 * H) * p.speed * p.slots, memoryMb: rng.uniform(0, p.memoryPerSlotMb), bytes: 0 }, p.id, 0);
      if (i < p.slots) s.taskStarted(id, 0);
    }
  }
  return s;
}

/** The process's memory: heap and buffers outside it (typed arrays), after a full collection. */
function memoryNow(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

interface Row {
  machines: number;
  queued: number;
  admissionMs: { p50: number; p99: number };
  decisionsPerSecond: number;
  bytesPerMachine: number;
}

const rng = createRng(seed);
const miserly = createPolicy("miserly");
const outcomesBySize: Record<number, Record<string, number>> = {};

function measure(size: number, queued: number): Row {
  // At --machines, the market and jobs this bench drew before it had rows: the figures compare.
  const fork = (label: string) => rng.fork(size === M ? label : `${label}-${size}`);
  const policyRng = fork("policy");
  const profiles = machines(fork("machines"), size);
  const before = memoryNow();
  const state = build(fork("queue"), profiles, queued);
  // One quote (nothing committed) brings the placement index up to date, so its memory counts.
  miserly.quote(state, job(fork("probe"), `probe-${size}`, 1, 1), 1, fork("probe"));
  const bytesPerMachine = (memoryNow() - before) / size;
  const tasksQueued = state.tasks.size;

  const live: string[][] = [];
  let now = 1;
  // Keep the queue steady: for every committed job, finish the oldest job's tasks.
  const settle = (d: ReturnType<typeof miserly.admit>, j: Job): void => {
    commitDecision(state, j, d, now);
    if (d.outcome === "admitted") live.push(d.placements.map((p) => p.taskId));
    while (live.length > 50) for (const id of live.shift()!) state.taskFinished(id, now, 1);
  };

  // Warm up the JIT, then time 10-task admissions.
  for (let i = 0; i < 300; i++) {
    const j = job(policyRng, `w${size}-${i}`, 10, now);
    settle(miserly.admit(state, j, now, policyRng), j);
  }
  live.length = 0;
  const samples = 3000;
  const lat = new Float64Array(samples);
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < samples; i++) {
    now += 0.05;
    const j = job(policyRng, `j${size}-${i}`, 10, now);
    const t0 = process.hrtime.bigint();
    const d = miserly.admit(state, j, now, policyRng);
    lat[i] = Number(process.hrtime.bigint() - t0) / 1e6;
    outcomes[d.outcome] = (outcomes[d.outcome] ?? 0) + 1;
    settle(d, j);
  }
  lat.sort();
  outcomesBySize[size] = outcomes;

  // Throughput: single-task jobs, decided and committed, for about a second.
  const singles = Array.from({ length: 50_000 }, (_, i) => job(policyRng, `s${size}-${i}`, 1, now));
  let decisions = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 1000 && decisions < singles.length) {
    now += 0.001;
    const j = singles[decisions++]!;
    settle(miserly.admit(state, j, now, policyRng), j);
  }
  const decisionsPerSecond = decisions / ((performance.now() - t0) / 1000);
  const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
  return { machines: size, queued: tasksQueued, admissionMs: { p50: round(percentile(lat, 0.5), 3), p99: round(percentile(lat, 0.99), 3) }, decisionsPerSecond: Math.round(decisionsPerSecond), bytesPerMachine: Math.round(bytesPerMachine) };
}

const sizes = [...new Set([Math.min(10_000, M), M])].sort((a, b) => a - b);
const casesRng = rng.fork("cases");
const rows = sizes.map((size) => measure(size, Math.round((Q * size) / M)));

/**
 * One job of 10,000 identical tasks (as the service submits them: one work and memory figure per
 * job, 1 KB of input each), decided on a small market of `machines` like the one a live market
 * starts with: admitted when `value` covers it, delayed when it does not. Median of `runs`.
 */
function hugeJob(machinesN: number, memoryMb: number, value: number, runs = 7): { ms: number; outcome: string } {
  const s = new MarketState({ horizonSeconds: H });
  for (let i = 0; i < machinesN; i++) {
    s.upsertMachine({ id: `h${i}`, kind: "opportunistic", slots: 4, speed: 1 + (i % 7) * 0.1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e9, pricePerSecond: 0.0001 * (1 + (i % 5)), reputation: 1 }, 0);
  }
  const r = createRng(7);
  const j = Job.parse({
    id: "huge", arrivedAt: 0, benefit: { kind: "constant", value },
    tasks: Array.from({ length: 10_000 }, (_, i) => ({ id: `${r.int(1e9).toString(36)}-${i}`, work: 0.01, memoryMb, bytes: 1024 })),
  });
  const times: number[] = [];
  let outcome = "";
  for (let k = 0; k < runs; k++) {
    const t = performance.now();
    outcome = miserly.admit(s, j, 1, casesRng).outcome;
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(runs / 2)]!, outcome };
}
const huge = [
  { case: "1 machine, fits", ...hugeJob(1, 0, 20) },
  { case: "1 machine, memory full", ...hugeJob(1, 64, 20) },
  { case: "100 machines, memory full", ...hugeJob(100, 64, 20) },
  { case: "100 machines, fits", ...hugeJob(100, 0, 20) },
  { case: "1,000 machines, unprofitable", ...hugeJob(1000, 64, 20, 3) },
];

/**
 * A small job of 20 identical tasks (one work and memory figure per job, as the service submits
 * them; their inputs differ in length, as a job's arguments do) decided on 1,000 opportunistic machines, a third of them running a task: on machines that
 * all look alike, as a load bench registers them, and on machines that differ. Decisions only
 * (nothing committed), each on a new job; median and p99 of `runs`.
 */
function smallJob(alike: boolean, runs = 300): { p50Micros: number; p99Micros: number; outcome: string } {
  const r = createRng(11);
  const s = new MarketState({ horizonSeconds: H });
  for (let i = 0; i < 1000; i++) {
    const speed = alike ? 1 : Math.exp(r.uniform(Math.log(0.5), Math.log(2)));
    s.upsertMachine({ id: `s${i}`, owner: `p${i % 100}`, kind: "opportunistic", slots: alike ? 2 : 1 + r.int(8), speed, memoryPerSlotMb: 4096, bandwidthBytesPerSecond: 1e6, pricePerSecond: alike ? 0.0001 : speed * r.uniform(0.00005, 0.0002), reputation: 1 }, 0);
  }
  for (let i = 0; i < 1000; i += 3) {
    s.assignTask({ id: `busy${i}`, jobId: "background", work: 30, memoryMb: 1, bytes: 0 }, `s${i}`, 0);
    s.taskStarted(`busy${i}`, 0);
  }
  const times = new Float64Array(runs);
  let outcome = "";
  for (let k = 0; k < runs; k++) {
    const j = Job.parse({ id: `small${k}`, arrivedAt: 1, benefit: { kind: "constant", value: 100 }, tasks: Array.from({ length: 20 }, (_, i) => ({ id: `small${k}-${i}`, work: 0.001, memoryMb: 1, bytes: 100 + String(i).length })) });
    const t = process.hrtime.bigint();
    outcome = miserly.admit(s, j, 1, casesRng).outcome;
    times[k] = Number(process.hrtime.bigint() - t) / 1000;
  }
  times.sort();
  return { p50Micros: percentile(times, 0.5), p99Micros: percentile(times, 0.99), outcome };
}
const small = [
  { case: "1,000 machines alike", ...smallJob(true) },
  { case: "1,000 machines that differ", ...smallJob(false) },
];

/**
 * One rebalancing pass of the live market's policy (miserly, moves at any gain: the Market
 * Manager's sweeper runs it every second) over 1,000 two-slot machines, 200 of them running two
 * tasks with a 20-task job queued behind, the rest idle: the mixed load bench's market.
 */
function rebalancePass(passes = 20): { msPerPass: number; moves: number } {
  const policy = createPolicy("miserly", { migration: { rule: "rebalance", moveRunning: false, minGain: 0 } });
  const state = new MarketState({ horizonSeconds: H, priceConstant: defaultPriceConstant(Array(1000).fill(0.0001), H) });
  for (let i = 0; i < 1000; i++) state.upsertMachine({ id: `r${i}`, kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 4096, bandwidthBytesPerSecond: 1e8, pricePerSecond: 0.0001 }, 0);
  for (let m = 0; m < 200; m++) {
    for (let j = 0; j < 22; j++) {
      const id = `r${m}-${j}`;
      state.assignTask({ id, jobId: `job-${m}`, work: 0.001, memoryMb: 1, bytes: 0 }, `r${m}`, 0);
      if (j < 2) state.taskStarted(id, 0);
    }
  }
  const rng = createRng(seed);
  let moves = 0;
  const start = performance.now();
  for (let p = 0; p < passes; p++) moves = policy.tick(state, 1 + p / 1000, rng).moves.length;
  return { msPerPass: Math.round(((performance.now() - start) / passes) * 100) / 100, moves };
}
const rebalance = rebalancePass();

const result = {
  rows,
  seed,
  admissionOutcomes: rows.map((r) => ({ machines: r.machines, ...outcomesBySize[r.machines] })),
  hugeJob10000Tasks: huge,
  smallJob20Tasks: small,
  rebalancePass1000Machines: rebalance,
};
if (json) console.log(JSON.stringify(result));
else {
  console.log(`engine: ${sizes.join(" and ")} machines, ${Q} tasks queued or running at ${M} (as many per machine at each size), seed ${seed}\n`);
  console.log(table([
    ["measure", ...rows.map((r) => `${r.machines} machines`), "target"],
    ["tasks queued or running", ...rows.map((r) => r.queued), ""],
    ["10-task admission p50 (ms)", ...rows.map((r) => r.admissionMs.p50), "< 1"],
    ["10-task admission p99 (ms)", ...rows.map((r) => r.admissionMs.p99), "< 5"],
    ["single-task decisions / s", ...rows.map((r) => r.decisionsPerSecond), ">= 20000"],
    ["bytes per machine (with its queue)", ...rows.map((r) => r.bytesPerMachine), "< 1024"],
  ]));
  console.log(`\noutcomes of the timed 10-task jobs: ${rows.map((r) => `${r.machines}: ${JSON.stringify(outcomesBySize[r.machines])}`).join(", ")}`);
  console.log("\none job of 10,000 identical tasks, decided (median of 7 decisions, 3 at 1,000 machines):\n");
  console.log(table([["market", "outcome", "ms per decision"], ...huge.map((h) => [h.case, h.outcome, h.ms])]));
  console.log("\none job of 20 identical tasks, decided (300 decisions, a third of the machines busy):\n");
  console.log(table([["market", "outcome", "p50 (µs)", "p99 (µs)"], ...small.map((h) => [h.case, h.outcome, h.p50Micros, h.p99Micros])]));
  console.log(`\none rebalancing pass, 1,000 machines, 200 with a 20-task queue: ${rebalance.msPerPass} ms (${rebalance.moves} moves)`);
}

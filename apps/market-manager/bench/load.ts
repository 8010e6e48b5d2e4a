// npm run -s bench:load -- --machines M --consumers C --seconds S [--slots N] [--jobTasks J] [--joinSeconds R] [--jobsPerSecond Q] [--windowSeconds W] [--json] [--profile] [--statements]
//
// --statements: PostgreSQL counts what each statement cost (pg_stat_statements), and the output's
// `statements` lists the costliest of the load, `walFlushes` the flushes of the write-ahead log
// its commits waited for, with their time (the same in bench:dispatch).
//
// A market under mixed load for S seconds: M simulated machines (ten to a producer) join over R
// seconds, each registering, heartbeating at the protocol's interval, holding its work stream,
// leasing and reporting; C consumers each submit a job of J trivial tasks, watch its page (what
// the job page polls: `jobs.get` a second, its progress, the balance, the outputs as tasks
// finish) until it completes, and submit the next; with --jobsPerSecond Q, the consumers submit Q
// jobs a second between them instead (Poisson arrivals, each job's page watched while the next
// ones come), so the latencies are those of a load chosen, not of the most the two cores carry.
// Prints the dispatch bench's figures plus the machines the market declared departed although they kept
// heartbeating, the same latencies over the calls made once every machine had joined
// (`afterJoining`) and by W seconds of the load (`windows`), the manager's peak memory, the books of every job that finished, and how long
// /healthz took to answer (asked every 100 ms throughout, on the health port and on the market's). `managerMs` is the manager's own time
// per kind of call, as its /metrics histogram counts it (server-times.ts), beside the generator's;
// `journalMs` the journal's statements and the reports' wait for their group, as in bench:dispatch.
//
// npm run -s bench:load -- --heartbeat-only --machines 10000 --seconds 120 --joinSeconds 60 [--perProducer 100] [--json]
//
// Heartbeats only: M machines register over R seconds and then only heartbeat, each at the
// interval the market gave it at registration (the protocol's: a third of the lease timeout), with
// no work stream, no consumers and no jobs; each call is made by the Node worker's own tRPC client
// (its keep-alive transport keeps the load generator sharing the machine light). Prints registrations and heartbeats with their times and rate,
// /healthz, how late the manager's event loop ran, machines declared departed and peak memory.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { args, consumer, print, producerToken, profileFile, round, startBenchManager, startFleet, Timings, trivialJob, type BenchManager, type Consumer } from "./harness.ts";
import { createTrpcApi } from "../../worker-runtime/src/node/trpc-api.ts";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Worker } from "node:worker_threads";

const opt = args({ machines: 100, consumers: 10, seconds: 60, slots: 2, jobTasks: 20, joinSeconds: 10, drainSeconds: 60, perProducer: 10, jobsPerSecond: 0, windowSeconds: 10 }, ["heartbeat-only", "statements"]);
const profileDir = opt.profile ? join(process.cwd(), "profiles") : undefined;
if (profileDir) mkdirSync(profileDir, { recursive: true });

const manager = await startBenchManager({ statements: opt.statements });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
try {
  const producers = Math.max(1, Math.ceil(opt.machines / opt.perProducer));
  const tokens: string[] = [];
  for (let i = 0; i < producers; i++) tokens.push(await producerToken(manager, `seller${i}@bench.test`));
  if (opt["heartbeat-only"]) await heartbeatsOnly(manager, tokens);
  else await mixedLoad(manager, tokens);
} catch (e) {
  console.error(`bench:load stopped: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  await manager.stop();
}
process.exit(process.exitCode ?? 0);

async function mixedLoad(manager: BenchManager, tokens: string[]) {
  const buyers: Consumer[] = [];
  for (let i = 0; i < opt.consumers; i++) buyers.push(await consumer(manager, `buyer${i}@bench.test`));

  const timings = new Timings();
  const firstLease = new Map<string, number>();
  const submittedAt = new Map<string, number>();
  let peakRss = 0;
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, manager.rssMb())), 1000);
  const health = probeHealth(manager, timings);
  await manager.statementsStart();
  await manager.callsStart();
  // The profile covers the load alone, as the CPU figures do (not the start or the sign-ups before it).
  if (profileDir) await manager.profileStart();
  const cpuBefore = manager.cpu();
  const generator = watchGenerator();
  const started = performance.now();
  const fleet = startFleet({
    url: manager.url,
    tokens,
    machines: opt.machines,
    slots: opt.slots,
    timings,
    staggerMs: (opt.joinSeconds * 1000) / opt.machines,
    onLease: (jobId, at) => {
      if (firstLease.has(jobId)) return;
      firstLease.set(jobId, at);
      const sent = submittedAt.get(jobId);
      if (sent !== undefined) timings.addAt("submitToLease", at - sent, sent);
    },
  });

  const endAt = started + opt.seconds * 1000;
  const jobIds: string[] = [];
  const finished: string[] = [];
  const failures: string[] = [];
  let delayed = 0;
  /** Submits one job and watches its page until it ends; false when it was not admitted or queued (the reason is kept). */
  async function job(buyer: Consumer, name: string): Promise<boolean> {
    const sent = performance.now();
    let jobId: string;
    try {
      const answer = await buyer.jobs.submit.mutate(trivialJob(name, opt.jobTasks));
      jobId = answer.jobId;
      // Machines join over the first seconds, so a delayed job is expected early on: the market
      // asks again as machines arrive, and the job page is polled until the drain's end. A
      // rejected job will never run: its reasons are printed.
      if (answer.decision.outcome === "delayed") delayed++;
      if (answer.decision.outcome === "rejected") {
        if (failures.length < 10) failures.push(`job rejected: ${JSON.stringify(answer.decision.reasons)}`);
        return false;
      }
    } catch (e) {
      if (failures.length < 10) failures.push(`submit: ${e instanceof Error ? e.message : String(e)}`);
      return false;
    }
    timings.add("submit", performance.now() - sent);
    submittedAt.set(jobId, sent);
    // A lease whose event was read before the submission's answer: counted now, or never.
    const leased = firstLease.get(jobId);
    if (leased !== undefined) timings.addAt("submitToLease", leased - sent, sent);
    jobIds.push(jobId);
    // The job page: what it polls while the job runs (past the end, the drain waits).
    if (await watchJobPage(buyer, jobId)) finished.push(jobId);
    return true;
  }
  /** A consumer who submits the next job once the page shows the last one ended: the load is what the market carries. */
  async function shop(buyer: Consumer, who: number) {
    for (let n = 0; performance.now() < endAt; n++) if (!(await job(buyer, `load ${who}.${n}`))) await sleep(1000);
  }
  /**
   * A consumer who submits jobs at its share of --jobsPerSecond whatever the market does (arrivals
   * of a Poisson process, each job's page watched on its own): the latencies at a load the
   * operator chose, not at the most the machine carries.
   */
  async function shopAtRate(buyer: Consumer, who: number) {
    const meanMs = (opt.consumers / opt.jobsPerSecond) * 1000;
    // The time to the next arrival: exponential, with the consumer's mean.
    const gap = () => -Math.log(1 - Math.random()) * meanMs;
    const watching: Promise<boolean>[] = [];
    for (let n = 0, next = started + gap(); next < endAt; n++, next += gap()) {
      await sleep(next - performance.now());
      watching.push(job(buyer, `load ${who}.${n}`));
    }
    await Promise.all(watching);
  }
  /**
   * The job page (apps/web/app/jobs/[id]) while its job runs: `jobs.get` every second, the
   * progress chart's `jobs.progress` every 2 s, the header's balance (`ledger.balance`) every
   * 4 s, and the task outputs' first page (`jobs.outputs`) at first sight and again whenever the
   * count of finished tasks moves. The page's timers start together when it opens, so calls due in the same
   * second go in one batched request, as the page's batching link sends them.
   */
  async function watchJobPage(buyer: Consumer, jobId: string): Promise<boolean> {
    let done = -1;
    // Tick 0 is the page opening: every query at once; then each at its interval.
    for (let tick = 0; ; tick++) {
      if (tick > 0) await sleep(1000);
      const t = performance.now();
      const [view] = await Promise.all([
        buyer.jobs.get.query({ jobId }).catch(() => null),
        tick % 2 === 0 ? buyer.jobs.progress.query({ jobId }).catch(() => null) : null,
        tick % 4 === 0 ? buyer.ledger.balance.query().catch(() => null) : null,
      ]);
      timings.add("jobPage", performance.now() - t);
      if (view && view.tasksDone !== done) {
        done = view.tasksDone;
        const o = performance.now();
        await buyer.jobs.outputs.query({ jobId, fromIndex: 0, limit: 50 }).catch(() => null);
        timings.add("jobOutputs", performance.now() - o);
      }
      if (view && (view.status === "completed" || view.status === "failed" || view.status === "rejected")) return view.status === "completed";
      if (performance.now() > endAt + opt.drainSeconds * 1000) return false;
    }
  }
  await Promise.all(buyers.map((b, i) => (opt.jobsPerSecond > 0 ? shopAtRate(b, i) : shop(b, i))));
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = manager.cpu();
  if (profileDir) await manager.profileStop(profileFile(profileDir, "load"));
  clearInterval(rssTimer);
  await health.stop();
  const accepted = fleet.accepted();
  const { books, departed, loopDelayMs, serverMs, journalMs, statements, walFlushes } = await manager.audit(finished);
  await fleet.stop();
  print(
    {
      machines: opt.machines,
      consumers: opt.consumers,
      seconds: round(seconds, 1),
      tasksPerSecond: round(accepted / seconds, 1),
      submitToLeaseMs: timings.latency("submitToLease"),
      leaseMs: timings.latency("lease"),
      emptyLeases: timings.summary("emptyLease").count,
      reportMs: timings.latency("report"),
      heartbeatMs: timings.latency("heartbeat"),
      registerMs: timings.latency("register"),
      submitMs: timings.latency("submit"),
      jobPageMs: timings.latency("jobPage"),
      jobOutputsMs: timings.latency("jobOutputs"),
      healthzMs: timings.latency("healthz"),
      healthzMarketPortMs: timings.latency("healthzMarketPort"),
      afterJoining: afterJoining(timings, started),
      windows: windows(timings, started, seconds),
      managerCpuMsPerTask: accepted ? round((cpuAfter.managerMs - cpuBefore.managerMs) / accepted, 3) : null,
      postgresCpuMsPerTask: accepted ? round((cpuAfter.postgresMs - cpuBefore.postgresMs) / accepted, 3) : null,
      managerCpuCores: round((cpuAfter.managerMs - cpuBefore.managerMs) / 1000 / seconds, 2),
      loadGenerator: generator.stop(seconds),
      departedWhileHeartbeating: departed,
      managerLoopDelayMs: loopDelayMs,
      managerMs: serverMs,
      journalMs,
      peakRssMb: round(peakRss, 0),
      jobsPerSecond: opt.jobsPerSecond > 0 ? opt.jobsPerSecond : null,
      jobs: { submitted: jobIds.length, delayedAtSubmission: delayed, completed: finished.length, unfinished: jobIds.length - finished.length },
      refusedReports: fleet.refused(),
      failedRuns: fleet.failedRuns(),
      lost: books.lost,
      books,
      ...(statements ? { statements, walFlushes } : {}),
      ...(failures.length || fleet.errors().length ? { errors: [...failures, ...fleet.errors()].slice(0, 8) } : {}),
    },
    opt.json,
  );
}

/**
 * The machine protocol's latencies and the job page's over the calls that began once every
 * machine had joined (`--joinSeconds` after the start): a market whose machines are all in,
 * without the first seconds of a manager just started and a thousand registrations. Null when the
 * joining lasted the whole load.
 */
function afterJoining(timings: Timings, started: number) {
  if (opt.joinSeconds >= opt.seconds) return null;
  const since = started + opt.joinSeconds * 1000;
  return {
    fromSecond: opt.joinSeconds,
    leaseMs: timings.latency("lease", since),
    reportMs: timings.latency("report", since),
    heartbeatMs: timings.latency("heartbeat", since),
    submitToLeaseMs: timings.latency("submitToLease", since),
    jobPageMs: timings.latency("jobPage", since),
  };
}

/**
 * The machine protocol's latencies by --windowSeconds of the load (10 by default), by when each
 * call began: where in the run a whole run's p99 comes from (a manager just started, the machines
 * joining, a steady market).
 */
function windows(timings: Timings, started: number, seconds: number) {
  const width = opt.windowSeconds;
  if (!(width > 0)) return null;
  const out = [];
  for (let from = 0; from < seconds; from += width) {
    const [since, until] = [started + from * 1000, started + (from + width) * 1000];
    out.push({
      fromSecond: from,
      registerMs: timings.latency("register", since, until),
      leaseMs: timings.latency("lease", since, until),
      emptyLeases: timings.summary("emptyLease", since, until).count,
      reportMs: timings.latency("report", since, until),
      heartbeatMs: timings.latency("heartbeat", since, until),
    });
  }
  return out;
}

/**
 * /healthz asked every 100 ms, as a load balancer's health check would ask it: from a thread of
 * its own, so the answer's time is the manager's and the connection's, not the wait for this
 * process's event loop, busy with a thousand simulated machines (a wait the probe counted when
 * it ran on that loop). Asked on the health port
 * (`healthz`: MARKET_HEALTH_PORT, answered by a thread of the manager's own) and on the market's
 * port (`healthzMarketPort`: answered by the market's thread, after the calls before it).
 */
function probeHealth(manager: BenchManager, timings: Timings) {
  const prober = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
    let stopped = false;
    const times = { healthz: [], healthzMarketPort: [] };
    parentPort.once("message", () => (stopped = true));
    const ask = async (url) => {
      const t = performance.now();
      const ok = await fetch(url + "/healthz").then((r) => r.arrayBuffer().then(() => r.ok), () => false);
      return ok ? performance.now() - t : null;
    };
    (async () => {
      while (!stopped) {
        const [own, market] = await Promise.all([workerData.healthUrl ? ask(workerData.healthUrl) : null, ask(workerData.url)]);
        if (own !== null) times.healthz.push(own);
        if (market !== null) times.healthzMarketPort.push(market);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      parentPort.postMessage(times);
    })();`,
    { eval: true, workerData: { url: manager.url, healthUrl: manager.healthUrl } },
  );
  const answered = new Promise<Record<"healthz" | "healthzMarketPort", number[]>>((resolve, reject) => prober.once("message", resolve).once("error", reject));
  return {
    stop: async () => {
      prober.postMessage("stop");
      for (const [kind, times] of Object.entries(await answered)) for (const ms of times) timings.add(kind, ms);
      await prober.terminate();
    },
  };
}

/** Machines that register and then only heartbeat, each at the interval the market gave it. */
async function heartbeatsOnly(manager: BenchManager, tokens: string[]) {
  const timings = new Timings();
  const errors: string[] = [];
  const failures: Record<string, number> = {};
  const failed = (stage: string, e: unknown) => {
    failures[stage] = (failures[stage] ?? 0) + 1;
    if (errors.length < 8) errors.push(`${stage}: ${e instanceof Error ? e.message : String(e)}`);
  };
  const timers: NodeJS.Timeout[] = [];
  let registered = 0;
  let heartbeats = 0;
  let peakRss = 0;
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, manager.rssMb())), 1000);
  const health = probeHealth(manager, timings);
  await manager.callsStart();
  if (profileDir) await manager.profileStart();
  const cpuBefore = manager.cpu();
  const generator = watchGenerator();
  const started = performance.now();
  const endAt = started + opt.seconds * 1000;
  const staggerMs = (opt.joinSeconds * 1000) / opt.machines;

  async function machine(i: number) {
    await sleep(i * staggerMs);
    const api = createTrpcApi(manager.url, tokens[i % tokens.length]!);
    let answer: { machineId: string; heartbeatIntervalMs: number } | null = null;
    // A refused registration (the market busy: 503 with Retry-After) is asked again, as the worker does.
    while (!answer && performance.now() < endAt) {
      const t = performance.now();
      try {
        answer = await api.register({ name: `beat-${i}`, kind: "opportunistic", slots: opt.slots, speed: 1, memoryPerSlotMb: 4096, bandwidthBytesPerSecond: 1e8, pricePerSecond: 0.0001, userAgent: "bench" });
        timings.add("register", performance.now() - t);
        registered++;
      } catch (e) {
        failed("register", e);
        await sleep(1000);
      }
    }
    if (!answer) return;
    const { machineId, heartbeatIntervalMs } = answer;
    timers.push(
      setInterval(() => {
        const t = performance.now();
        api.heartbeat({ machineId, leaseIds: [] }).then(
          () => (timings.add("heartbeat", performance.now() - t), heartbeats++),
          (e: unknown) => failed("heartbeat", e),
        );
      }, heartbeatIntervalMs),
    );
  }

  await Promise.all(Array.from({ length: opt.machines }, (_, i) => machine(i)));
  const joined = performance.now();
  const beatsAtJoin = heartbeats;
  await sleep(Math.max(0, endAt - performance.now()));
  const ended = performance.now();
  const seconds = (ended - started) / 1000;
  const cpuAfter = manager.cpu();
  if (profileDir) await manager.profileStop(profileFile(profileDir, "heartbeats"));
  for (const t of timers) clearInterval(t);
  clearInterval(rssTimer);
  await health.stop();
  const { departed, loopDelayMs, serverMs } = await manager.audit([]);
  const pick = (kind: string) => {
    const s = timings.summary(kind);
    return { p50: s.p50, p99: s.p99, max: s.max, count: s.count };
  };
  print(
    {
      mode: "heartbeat-only",
      machines: opt.machines,
      registered,
      seconds: round(seconds, 1),
      joinedInSeconds: round((joined - started) / 1000, 1),
      registrationsPerSecond: round(registered / ((joined - started) / 1000), 1),
      heartbeatsPerSecondOnceJoined: round((heartbeats - beatsAtJoin) / Math.max(0.001, (ended - joined) / 1000), 1),
      registerMs: timings.latency("register"),
      heartbeatMs: timings.latency("heartbeat"),
      healthzMs: timings.latency("healthz"),
      healthzMarketPortMs: timings.latency("healthzMarketPort"),
      managerLoopDelayMs: loopDelayMs,
      managerMs: serverMs,
      managerCpuCores: round((cpuAfter.managerMs - cpuBefore.managerMs) / 1000 / seconds, 2),
      postgresCpuCores: round((cpuAfter.postgresMs - cpuBefore.postgresMs) / 1000 / seconds, 2),
      loadGenerator: generator.stop(seconds),
      departedWhileHeartbeating: departed,
      peakRssMb: round(peakRss, 0),
      failedCalls: failures,
      ...(errors.length ? { errors } : {}),
    },
    opt.json,
  );
}

/**
 * This process's own CPU and event-loop delay over the run: every latency above is timed here, so
 * a generator near a whole core, or late by as much as the latencies, measured itself, not the market.
 */
function watchGenerator() {
  const cpu = process.cpuUsage();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  return {
    stop(seconds: number) {
      loop.disable();
      const used = process.cpuUsage(cpu);
      const ms = (ns: number) => round(ns / 1e6, 1);
      return { cpuCores: round((used.user + used.system) / 1e6 / seconds, 2), loopDelayMs: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) } };
    },
  };
}

// npm run -s bench:dispatch -- --workers K --tasks N [--slots S] [--jobTasks J] [--probes P] [--warmup W] [--warmupTasks T] [--managers M] [--json] [--profile] [--follow]
// npm run -s bench:dispatch -- --vs-graphile-worker [--workers K --slots S --tasks N --jobTasks J --rounds R --localQueue Q --batchDelay D --poolSize C] [--json] [--profile] [--statements] [--wal] [--checkpointSeconds C]
//
// Dispatch at full speed: K simulated workers (the Node worker's producer loop and client, no
// sandbox) on a market of their own. First, submit to lease: P one-task jobs, one at a time, while
// every worker idles on its work stream; the time from the submission leaving the consumer to a
// worker holding the lease. W probes for each manager go first and are not counted: a manager just
// started runs its first submissions before its code is compiled for speed, slower than later ones,
// and a market that has run for a minute does not. Then a warm-up load of T tasks per manager
// (`--warmupTasks`, 30,000 unless told, its CPU printed apart: a manager's CPU per task keeps
// falling over its first tens of thousands of tasks, as its code is compiled for speed and its
// heap grows to the load, so a shorter one compared a young manager with an older one), and
// throughput: N trivial tasks in jobs of J, end to end
// (decisions, leases, reports, payments, settlements), and the Market Manager's CPU per task. Last,
// the books.
//
// Slots default to 32: a Node worker runs a task per hardware thread, and the servers that sell
// cycles have 16 to 64 of them. With 4 slots per worker the bench measured round trips (40 tasks
// in flight, a cycle of one call each), not what the manager sustains. `--profile` writes a CPU
// profile of the throughput phase alone to profiles/ (read it with bench/profile-summary.ts), and
// `workersCpuMsPerTask` says what the simulated workers cost: they share the machine. `managerMs`
// is the manager's own time per kind of call in the throughput phase (server-times.ts), and
// `journalMs` its journal's: each kind of statement's wait to be sent and its time from sent to
// answered ("reports.wait", "reports.write", "admission.write", ...), and each report's wait for
// its group to be decided ("reports.group"). With
// `--follow` the consumer follows each job's outputs as they are accepted (`jobs.streamOutputs`,
// as the SDK's `results()` does) until the job ends; `followedOutputs` counts what it was sent.
//
// With `--managers M` (1 by default, at most MAX_MANAGERS) the market has M Market Managers on one
// PostgreSQL (the first's embedded one), each its own process: the workers register through the
// first and name their managers in turn, and the jobs (probes and loads) go to the managers in turn, each
// job run by its manager on its own machines. `managerCpuMsPerTask` is then the managers' CPU
// together, `managerCpuMsPerTaskEach` each one's; `managerMs` and `journalMs` are the first's.
import { mkdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { compareWithGraphileWorker } from "./vs-graphile-worker.ts";
import { args, print, producerToken, profileFile, round, startBenchManager, startFleet, submitTrivial, Timings, until, webClientFor, type BenchManager } from "./harness.ts";
import { signUpSession } from "../../../test/support/market.ts";

const opt = args(
  // The last five are --vs-graphile-worker's (vs-graphile-worker.ts): rounds of each, graphile-worker's local queue, completion batch delay (ms) and connections per runner, and a checkpoint every C seconds of a market round.
  { workers: 10, tasks: 2000, slots: 32, jobTasks: 1000, probes: 30, warmup: 50, warmupTasks: 30_000, managers: 1, rounds: 3, localQueue: 500, batchDelay: 0, poolSize: 4, checkpointSeconds: 0 },
  ["statements", "follow", "vs-graphile-worker", "wal"],
);
if (opt["vs-graphile-worker"]) {
  try {
    // Rounds long enough to be more than their start and end: 20,000 tasks unless told.
    await compareWithGraphileWorker({ ...opt, tasks: process.argv.includes("--tasks") ? opt.tasks : 20_000 });
  } catch (e) {
    console.error(`bench:dispatch --vs-graphile-worker stopped: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  }
  process.exit(process.exitCode ?? 0);
}
const profileDir = opt.profile ? join(process.cwd(), "profiles") : undefined;
if (profileDir) mkdirSync(profileDir, { recursive: true });

/** The most managers one bench starts: each is a process with its connections to one PostgreSQL. */
const MAX_MANAGERS = 8;
if (!Number.isInteger(opt.managers) || opt.managers < 1 || opt.managers > MAX_MANAGERS) {
  console.error(`bench:dispatch: --managers is a whole number from 1 to ${MAX_MANAGERS}`);
  process.exit(1);
}

// The profile covers the throughput phase only (not the start, the probes or the books).
// Several managers share one secret, so a consumer's session holds at each of them.
const secret = randomBytes(24).toString("hex");
const several = (id: number) => (opt.managers > 1 ? { MARKET_MANAGER_ID: `manager-${id}`, BETTER_AUTH_SECRET: secret } : {});
const manager = await startBenchManager({ statements: opt.statements, env: several(1) });
const managers: BenchManager[] = [manager];
try {
  for (let i = 2; i <= opt.managers; i++) managers.push(await startBenchManager({ env: { ...several(i), DATABASE_URL: manager.databaseUrl, MARKET_MIGRATE: "0" } }));
  // Each manager reads the others' rows at its next stamp. The workers name their managers in
  // turn (a registration routed by room can land unevenly while the views lag a burst of them,
  // and the fair share then moves machines mid-run): the same split every run, to compare runs.
  const seen = async () => (await Promise.all(managers.map((m) => m.managersAlive()))).every((n) => n >= opt.managers);
  await until("every manager seeing the others", seen, 60_000, 100);
  const session = await signUpSession(manager.url, "buyer@bench.test", ["consumer"], manager.outbox);
  const buyers = managers.map((m) => webClientFor(m.url, session));
  const buyer = buyers[0]!;
  const tokens = await Promise.all([0, 1, 2, 3].map((i) => producerToken(manager, `seller${i}@bench.test`)));
  const timings = new Timings();
  const firstLease = new Map<string, number>();
  const fleet = startFleet({
    url: manager.url,
    tokens,
    machines: opt.workers,
    slots: opt.slots,
    timings,
    ...(opt.managers > 1 ? { managers: managers.map((_, i) => `manager-${i + 1}`) } : {}),
    onLease: (jobId, at) => void (firstLease.has(jobId) || firstLease.set(jobId, at)),
  });
  await until("every worker's work stream", () => fleet.ready() >= opt.workers, 120_000);
  const jobIds: string[] = [];

  // Submit to lease, for an idle worker.
  const toLease = new Timings();
  // W warm-up probes for every manager: each is a process that compiles its own code.
  const warmups = opt.warmup * managers.length;
  for (let i = -warmups; i < opt.probes; i++) {
    const before = fleet.accepted();
    const sent = performance.now();
    const jobId = await submitTrivial(buyers[(i + warmups) % buyers.length]!, i < 0 ? `warm-up ${-i}` : `probe ${i}`, 1);
    const answered = performance.now();
    jobIds.push(jobId);
    await until("the probe's lease", () => firstLease.has(jobId), 30_000, 1);
    if (i >= 0) {
      toLease.add("submitToLease", firstLease.get(jobId)! - sent);
      // Of which the submission's own answer (the job admitted and its tasks queued, durably).
      toLease.add("submit", answered - sent);
    }
    await until("the probe's report", () => fleet.accepted() > before, 30_000, 1);
  }

  /** N tasks in jobs of J sent to the managers in turn, until every task's report is accepted. */
  let followedOutputs = 0;
  async function load(tasks: number, name: string) {
    const acceptedBefore = fleet.accepted();
    const submissions: Promise<unknown>[] = [];
    const followed: Promise<void>[] = [];
    for (let left = tasks, j = 0; left > 0; left -= opt.jobTasks, j++) {
      const to = buyers[j % buyers.length]!;
      submissions.push(
        submitTrivial(to, `${name} ${j}`, Math.min(left, opt.jobTasks)).then((jobId) => {
          jobIds.push(jobId);
          if (opt.follow) followed.push(follow(to, jobId));
        }),
      );
    }
    await Promise.all(submissions);
    await until("every task's report", () => fleet.accepted() - acceptedBefore >= tasks, 30 * 60_000, 5);
    await Promise.all(followed);
  }
  /** The job's outputs as its manager accepts them, until its end. */
  function follow(from: typeof buyer, jobId: string) {
    return new Promise<void>((resolve, reject) => {
      const sub = from.jobs.streamOutputs.subscribe(
        { jobId },
        {
          onData: ({ data }) => {
            if (data.kind === "output") followedOutputs++;
            else (sub.unsubscribe(), resolve());
          },
          onError: reject,
        },
      );
    });
  }

  // Warm-up load, not counted: the probes run one-task jobs, and a manager compiles its paths for
  // groups of reports and leases and for large jobs only once it runs them. Each manager is a
  // process that compiles them once, when it starts, and runs them for as long as it lives; what
  // that costs is printed apart, so the counted load is what a running manager spends per task.
  const warmCpu = managers.map((m) => m.cpu().managerMs);
  await load(opt.warmupTasks * managers.length, "warm-up load");
  const warmupCpuMs = managers.map((m, i) => m.cpu().managerMs - warmCpu[i]!);
  followedOutputs = 0;

  // Throughput, end to end.
  timings.clear();
  // Every manager is profiled, each to a file of its own: with several, the task's cost is all of theirs.
  if (profileDir) await Promise.all(managers.map((m) => m.profileStart()));
  await manager.statementsStart();
  await manager.callsStart();
  const cpuBefore = managers.map((m) => m.cpu());
  const benchCpuBefore = process.cpuUsage();
  const started = performance.now();
  await load(opt.tasks, "load");
  // The job's settlement follows its last accepted report in the same transaction.
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = managers.map((m) => m.cpu());
  const managersCpuMs = managers.map((_, i) => cpuAfter[i]!.managerMs - cpuBefore[i]!.managerMs);
  const benchCpu = process.cpuUsage(benchCpuBefore);
  const rssMb = managers.reduce((s, m) => s + m.rssMb(), 0);
  if (profileDir) await Promise.all(managers.map((m, i) => m.profileStop(profileFile(profileDir, opt.managers > 1 ? `dispatch-m${i + 1}of${opt.managers}` : "dispatch"))));
  await fleet.stop();
  const { books, serverMs, journalMs, statements, walFlushes } = await manager.audit(jobIds);
  const probe = toLease.summary("submitToLease");
  const submit = toLease.summary("submit");
  print(
    {
      managers: opt.managers,
      workers: opt.workers,
      slots: opt.slots,
      tasks: opt.tasks,
      tasksPerSecond: round(opt.tasks / seconds, 1),
      submitToLeaseMs: { p50: probe.p50, p99: probe.p99 },
      warmupProbes: opt.warmup,
      submitMs: { p50: submit.p50, p99: submit.p99 },
      leaseMs: timings.latency("lease"),
      reportMs: timings.latency("report"),
      heartbeatMs: timings.latency("heartbeat"),
      managerMs: serverMs,
      journalMs,
      warmupTasks: opt.warmupTasks * managers.length,
      warmupManagerCpuMs: warmupCpuMs.map((x) => round(x, 0)),
      managerCpuMsPerTask: round(managersCpuMs.reduce((s, x) => s + x, 0) / opt.tasks, 3),
      ...(opt.managers > 1 ? { managerCpuMsPerTaskEach: managersCpuMs.map((x) => round(x / opt.tasks, 3)) } : {}),
      // Of which the managers' main threads (the event loop: calls, decisions, statements); the rest is their runtimes' helper threads (compilation, garbage collection).
      managerMainThreadCpuMsPerTask: round(managers.reduce((s, _, i) => s + cpuAfter[i]!.mainThreadMs - cpuBefore[i]!.mainThreadMs, 0) / opt.tasks, 3),
      // The embedded PostgreSQL is the first manager's: every manager's connections are its backends.
      postgresCpuMsPerTask: round((cpuAfter[0]!.postgresMs - cpuBefore[0]!.postgresMs) / opt.tasks, 3),
      // The simulated workers share the machine: what they cost bounds what the market can be shown to do.
      workersCpuMsPerTask: round((benchCpu.user + benchCpu.system) / 1000 / opt.tasks, 3),
      rssMb: round(rssMb, 0),
      ...(opt.follow ? { followedOutputs } : {}),
      refusedReports: fleet.refused(),
      failedRuns: fleet.failedRuns(),
      lost: books.lost,
      books,
      ...(statements ? { statements, walFlushes } : {}),
      ...(fleet.errors().length ? { workerErrors: fleet.errors().slice(0, 5) } : {}),
    },
    opt.json,
  );
} catch (e) {
  // A bench that cannot go on says why in one line (a job not admitted names the engine's reasons).
  console.error(`bench:dispatch stopped: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  // The others first: the first holds the database they use.
  for (const m of managers.slice(1).reverse()) await m.stop();
  await manager.stop();
}
process.exit(process.exitCode ?? 0);

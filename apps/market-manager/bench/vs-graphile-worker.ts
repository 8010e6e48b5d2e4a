// bench:dispatch --vs-graphile-worker: the market's dispatch beside graphile-worker batched
// (graphile-worker.ts), alternately, three rounds each after a round of each to warm up, the same
// number of tasks and jobs, K machines of S slots against K runners of S jobs at a time, each on
// its own embedded PostgreSQL of the same binaries and settings. A market round is the dispatch
// bench's throughput phase: N trivial tasks in jobs of J submitted at once, until every report is
// acknowledged (committed with its payment). A graphile-worker round: N jobs added in calls of J at
// once, until every job ran and its completion is committed. The figures: each round's rate, the
// ratio of the medians, and over the market's rounds the write-ahead log it wrote per task
// (pg_current_wal_lsn before and after), the CPU per task of the manager's process and of its
// PostgreSQL (the postmaster and its children, from /proc), and `lost`: what the books say of
// every acknowledged task (audit.ts).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { consumer, print, producerToken, profileFile, round, startBenchManager, startFleet, submitTrivial, Timings, until, type BenchManager, type Consumer, type Fleet } from "./harness.ts";
import { startGraphileWorker, type GraphileRound } from "./graphile-worker.ts";
import { sumSplits, type WalSplit } from "./wal-split.ts";

export interface VsOptions {
  workers: number;
  slots: number;
  tasks: number;
  jobTasks: number;
  localQueue: number;
  batchDelay: number;
  poolSize: number;
  rounds: number;
  json: boolean;
  profile: boolean;
  statements: boolean;
  wal: boolean;
  /** Each market round starts with a checkpoint and has one every this many seconds (0: none), as a server that has run a while has them. */
  checkpointSeconds: number;
}

interface MarketRound {
  seconds: number;
  jobIds: string[];
  managerCpuMs: number;
  postgresCpuMs: number;
  /** The bench's process: the simulated workers and the consumer. */
  benchCpuMs: number;
  walBytes: number;
  /** With --wal: where the round's log went. */
  walSplit?: WalSplit;
}

const cpuOfSelf = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function marketRound(manager: BenchManager, buyer: Consumer, fleet: Fleet, tasks: number, jobTasks: number, name: string, wal = false, checkpointSeconds = 0): Promise<MarketRound> {
  const acceptedBefore = fleet.accepted();
  // A round that starts right after a checkpoint, as one does every so often on a server that has run a while.
  if (checkpointSeconds > 0) await manager.asOwner(["CHECKPOINT"]);
  const wal0 = await manager.walLsn();
  const cpu0 = manager.cpu();
  const bench0 = cpuOfSelf();
  const started = performance.now();
  const checkpoints = checkpointSeconds > 0 ? setInterval(() => void manager.asOwner(["CHECKPOINT"]), checkpointSeconds * 1000) : null;
  const submissions: Promise<string>[] = [];
  for (let left = tasks, j = 0; left > 0; left -= jobTasks, j++) submissions.push(submitTrivial(buyer, `${name} ${j}`, Math.min(left, jobTasks)));
  const jobIds = await Promise.all(submissions);
  await until("every task's report", () => fleet.accepted() - acceptedBefore >= tasks, 30 * 60_000, 5);
  const seconds = (performance.now() - started) / 1000;
  if (checkpoints) clearInterval(checkpoints);
  const cpu1 = manager.cpu();
  const bench1 = cpuOfSelf();
  const wal1 = await manager.walLsn();
  // Read at once, while the round's log files are still there (a checkpoint recycles them).
  const walSplit = wal ? await manager.walSplit(wal0, wal1) : undefined;
  return { seconds, jobIds, managerCpuMs: cpu1.managerMs - cpu0.managerMs, postgresCpuMs: cpu1.postgresMs - cpu0.postgresMs, benchCpuMs: bench1 - bench0, walBytes: Number(wal1 - wal0), walSplit };
}

/**
 * BENCH_ALTERNATE="name=value": the market's odd rounds run with that server setting (ALTER SYSTEM,
 * reloaded), the even ones without, and the figures say each apart. A setting the server was
 * started with on its command line (db/embedded.ts) outranks ALTER SYSTEM: compare those by
 * taking them out there first.
 */
function alternateSetting(text: string | undefined) {
  if (!text) return null;
  const m = /^([a-z_]+)=([A-Za-z0-9_.]+)$/.exec(text);
  if (!m) throw new Error(`BENCH_ALTERNATE is name=value (a server setting), not ${JSON.stringify(text)}`);
  return { name: m[1]!, value: `'${m[2]}'` };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export async function compareWithGraphileWorker(opt: VsOptions) {
  for (const name of ["rounds", "tasks", "jobTasks", "workers", "slots", "localQueue", "poolSize"] as const) {
    if (!(opt[name] >= 1)) throw new Error(`--${name} needs 1 or more, not ${opt[name]}`);
  }
  const alternate = alternateSetting(process.env.BENCH_ALTERNATE);
  const profileDir = opt.profile ? join(process.cwd(), "profiles") : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const manager = await startBenchManager({ statements: opt.statements });
  let graphile: Awaited<ReturnType<typeof startGraphileWorker>> | null = null;
  let fleet: Fleet | null = null;
  // graphile-worker's PostgreSQL is this process's child: stopped here too when the bench is interrupted, not left running.
  const interrupted = () => void Promise.allSettled([graphile?.stop(), manager.stop()]).then(() => process.exit(130));
  process.once("SIGINT", interrupted).once("SIGTERM", interrupted);
  try {
    graphile = await startGraphileWorker({ runners: opt.workers, concurrency: opt.slots, localQueueSize: opt.localQueue, batchDelayMs: opt.batchDelay, maxPoolSize: opt.poolSize });
    const buyer = await consumer(manager, "buyer@bench.test");
    const tokens = await Promise.all([0, 1, 2, 3].map((i) => producerToken(manager, `seller${i}@bench.test`)));
    fleet = startFleet({ url: manager.url, tokens, machines: opt.workers, slots: opt.slots, timings: new Timings() });
    await until("every worker's work stream", () => fleet!.ready() >= opt.workers, 120_000);
    await until("every runner's local queue", () => graphile!.localQueues() >= opt.workers, 60_000);

    // A round of each first, not counted: code compiled for speed, connections open, caches warm.
    const warm = Math.min(opt.tasks, 2000);
    const jobIds = (await marketRound(manager, buyer, fleet, warm, opt.jobTasks, "warm-up")).jobIds;
    await graphile.round(warm, opt.jobTasks);

    const market: MarketRound[] = [];
    const reference: GraphileRound[] = [];
    await manager.statementsStart();
    // The log of every round kept until it is read (a checkpoint would recycle its files): what is written stays the same.
    if (opt.wal) await manager.asOwner(["ALTER SYSTEM SET wal_keep_size = '8GB'", "SELECT pg_reload_conf()"]);
    for (let r = 0; r < opt.rounds; r++) {
      if (profileDir) await manager.profileStart();
      if (alternate) await manager.asOwner([r % 2 ? `ALTER SYSTEM SET ${alternate.name} = ${alternate.value}` : `ALTER SYSTEM RESET ${alternate.name}`, "SELECT pg_reload_conf()"]);
      const m = await marketRound(manager, buyer, fleet, opt.tasks, opt.jobTasks, `round ${r}`, opt.wal, opt.checkpointSeconds);
      if (profileDir) await manager.profileStop(profileFile(profileDir, "dispatch-vs-graphile-worker"));
      market.push(m);
      jobIds.push(...m.jobIds);
      reference.push(await graphile.round(opt.tasks, opt.jobTasks));
    }
    await fleet.stop();
    fleet = null;
    const { books, statements, walFlushes } = await manager.audit(jobIds);
    const tasksPerSecond = market.map((m) => round(opt.tasks / m.seconds, 1));
    const jobsPerSecond = reference.map((g) => round(opt.tasks / g.seconds, 1));
    const counted = opt.tasks * market.length;
    const sum = <T>(xs: T[], f: (x: T) => number) => xs.reduce((s, x) => s + f(x), 0);
    const figures: Record<string, unknown> = {
      market: { tasksPerSecond },
      graphileWorker: { jobsPerSecond },
      ratio: round(median(tasksPerSecond) / median(jobsPerSecond), 3),
      walBytesPerTask: Math.round(sum(market, (m) => m.walBytes) / counted),
      managerCpuMsPerTask: round(sum(market, (m) => m.managerCpuMs) / counted, 3),
      postgresCpuMsPerTask: round(sum(market, (m) => m.postgresCpuMs) / counted, 3),
      lost: books.lost,
    };
    // Not in the figures' shape: what was run, graphile-worker's own costs, and the books in full.
    const detail = {
      workers: opt.workers,
      slots: opt.slots,
      tasks: opt.tasks,
      jobTasks: opt.jobTasks,
      // The simulated workers share the machine with the manager: what they cost bounds what it can be shown to do.
      workersCpuMsPerTask: round(sum(market, (m) => m.benchCpuMs) / counted, 3),
      graphileWorker: {
        localQueueSize: opt.localQueue,
        batchDelayMs: opt.batchDelay,
        maxPoolSize: opt.poolSize,
        walBytesPerJob: Math.round(sum(reference, (g) => g.walBytes) / counted),
        runnersCpuMsPerJob: round(sum(reference, (g) => g.benchCpuMs) / counted, 3),
        postgresCpuMsPerJob: round(sum(reference, (g) => g.postgresCpuMs) / counted, 3),
        jobsNotRunOnce: sum(reference, (g) => g.notOnce),
      },
      books,
    };
    if (!opt.json) figures.detail = detail;
    if (opt.statements) Object.assign(figures, { statements, walFlushes });
    if (opt.wal) figures.wal = sumSplits(market.map((m) => m.walSplit!), counted);
    if (alternate) {
      // The market's rounds under the server's own settings (even) and under the alternate one (odd), apart.
      const under = (odd: number) => market.filter((_, r) => r % 2 === odd);
      const half = (odd: number) => {
        const ms = under(odd);
        const n = opt.tasks * ms.length;
        return {
          tasksPerSecond: ms.map((m) => round(opt.tasks / m.seconds, 1)),
          walBytesPerTask: Math.round(sum(ms, (m) => m.walBytes) / n),
          ...(opt.wal ? { fpiBytesPerTask: Math.round(sum(ms, (m) => sum(m.walSplit!.byKind, (k) => k.fpiBytes)) / n) } : {}),
          managerCpuMsPerTask: round(sum(ms, (m) => m.managerCpuMs) / n, 3),
          postgresCpuMsPerTask: round(sum(ms, (m) => m.postgresCpuMs) / n, 3),
        };
      };
      figures.alternate = { setting: `${alternate.name} = ${alternate.value}`, without: half(0), with: half(1) };
    }
    print(figures, opt.json);
    if (detail.graphileWorker.jobsNotRunOnce) console.error(`graphile-worker ran ${detail.graphileWorker.jobsNotRunOnce} jobs other than once`);
  } finally {
    await fleet?.stop();
    await graphile?.stop();
    await manager.stop();
  }
}

// graphile-worker as the dispatch bench's reference (bench:dispatch --vs-graphile-worker): a
// PostgreSQL job queue run batched, as its documentation's performance page runs it. Its own
// embedded PostgreSQL, started by the market's own code (the same binaries, locale, scheduling and
// authentication as the market's), and K runners in the bench's process (where the market's
// simulated workers run), each running S jobs at a time: a local queue (the runner locks a batch of
// jobs and hands them to its workers without a round trip each) and batched completion (the
// completions of a moment go to PostgreSQL as one statement). A job is one task: graphile-worker's
// "batch jobs" (an array payload, many items in one job) would count many tasks as one.
import { EventEmitter } from "node:events";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from "graphile-worker";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../src/db/embedded.ts";
import { freePort } from "../src/net/free-port.ts";
import { procStat } from "../src/db/proc.ts";
import { descendants, lsnBytes, procCpuMs, until } from "./harness.ts";

export interface GraphileWorkerOptions {
  /** Runners (graphile-worker instances), as the market has machines. */
  runners: number;
  /** Jobs each runner runs at once, as a machine has slots. */
  concurrency: number;
  /** Jobs a runner locks and holds at a time (localQueue.size). */
  localQueueSize: number;
  /** How long a completion waits for others to go with it, in ms (completeJobBatchDelay, failJobBatchDelay). */
  batchDelayMs: number;
  /** Connections each runner may hold. */
  maxPoolSize: number;
}

export interface GraphileRound {
  seconds: number;
  /** Jobs run other than exactly once (none run, or run twice). */
  notOnce: number;
  /** CPU of the bench's process (the runners and the job adder) and of the PostgreSQL, in ms. */
  benchCpuMs: number;
  postgresCpuMs: number;
  walBytes: number;
}

const TASK = "bench";
const silent = new Logger(() => () => {});

export async function startGraphileWorker(options: GraphileWorkerOptions) {
  const dataDir = mkdtempSync(join(tmpdir(), "cyclemarket-graphile-"));
  chmodSync(dataDir, 0o755); // PostgreSQL runs as its own user when we are root
  let db: EmbeddedDatabase | null = null;
  let utils: WorkerUtils | null = null;
  let probe: pg.Client | null = null;
  const runners: Runner[] = [];
  const pools: pg.Pool[] = [];
  const stop = async () => {
    await Promise.allSettled(runners.map((r) => r.stop()));
    await Promise.allSettled(pools.map((p) => p.end()));
    await utils?.release();
    await probe?.end();
    await db?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    // The market's default: its embedded PostgreSQL's processes as batch work (MARKET_PG_BATCH=0: not).
    db = await startEmbeddedPostgres({ dataDir: join(dataDir, "postgres"), port: await freePort(), batch: process.env.MARKET_PG_BATCH !== "0" });
    // The owner's connection: graphile-worker makes its own schema.
    const connectionString = db.ownerUrl;
    // Pools of our own, so that connections the server's stop ends are not an unhandled error at the end.
    const pool = (max: number) => {
      const p = new pg.Pool({ connectionString, max });
      p.on("error", () => {});
      p.on("connect", (client) => client.on("error", () => {}));
      pools.push(p);
      return p;
    };
    utils = await makeWorkerUtils({ pgPool: pool(4), logger: silent });
    await utils.migrate();
    probe = new pg.Client({ connectionString });
    await probe.connect();
    // A backend's parent is the postmaster: its CPU and its children's are the server's.
    const backend = (await probe.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const postmaster = Number(procStat(backend)![1]);

    // Which job of the round ran how many times.
    let runs = new Uint8Array(0);
    let ran = 0;
    let localQueues = 0;
    // Told before the runners start: each says once that its local queue is on.
    const events = new EventEmitter();
    events.on("localQueue:init", () => localQueues++);
    for (let i = 0; i < options.runners; i++) {
      const runner = await run({
        pgPool: pool(options.maxPoolSize),
        concurrency: options.concurrency,
        noHandleSignals: true,
        logger: silent,
        events: events as never,
        taskList: {
          [TASK]: async (payload) => {
            const n = (payload as { n: number }).n;
            if (runs[n]! < 255) runs[n]!++;
            ran++;
          },
        },
        preset: { worker: { localQueue: { size: options.localQueueSize }, completeJobBatchDelay: options.batchDelayMs, failJobBatchDelay: options.batchDelayMs } },
      });
      runners.push(runner);
    }
    const wal = async () => lsnBytes((await probe!.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn")).rows[0]!.lsn);
    const cpu = () => ({ bench: cpuOfSelf(), postgres: [postmaster, ...descendants(postmaster)].reduce((s, p) => s + procCpuMs(p), 0) });
    return {
      /** Runners whose local queue is on (each says so once it starts). */
      localQueues: () => localQueues,
      /** Adds `jobs` jobs in calls of `perCall` (all at once, as the market's bench submits its jobs) and waits until every one is done and its completion committed. */
      async round(jobs: number, perCall: number): Promise<GraphileRound> {
        runs = new Uint8Array(jobs);
        ran = 0;
        const wal0 = await wal();
        const cpu0 = cpu();
        const started = performance.now();
        const adds: Promise<unknown>[] = [];
        for (let first = 0; first < jobs; first += perCall) {
          const specs = Array.from({ length: Math.min(perCall, jobs - first) }, (_, i) => ({ identifier: TASK, payload: { n: first + i } }));
          adds.push(utils!.addJobs(specs));
        }
        await Promise.all(adds);
        await until("graphile-worker's jobs to run", () => ran >= jobs, 30 * 60_000, 5);
        // A job is done once its completion (its row's deletion) is committed.
        await until("graphile-worker's completions", async () => (await probe!.query("SELECT 1 FROM graphile_worker._private_jobs LIMIT 1")).rowCount === 0, 60_000, 5);
        const seconds = (performance.now() - started) / 1000;
        const cpu1 = cpu();
        const wal1 = await wal();
        let notOnce = 0;
        for (const r of runs) if (r !== 1) notOnce++;
        return { seconds, notOnce, benchCpuMs: cpu1.bench - cpu0.bench, postgresCpuMs: cpu1.postgres - cpu0.postgres, walBytes: Number(wal1 - wal0) };
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

function cpuOfSelf() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

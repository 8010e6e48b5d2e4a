// What both load benches share: a Market Manager in its own process with its own embedded
// PostgreSQL, users signed up as people are, simulated workers that run the Node worker's own
// producer loop over its own tRPC client (real HTTP, real work streams) with an executor that
// finishes every task at once with the expected output, and the figures the benches print.
import { fork, type ChildProcess } from "node:child_process";
import { setMaxListeners } from "node:events";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createTrpcApi } from "../../worker-runtime/src/node/trpc-api.ts";
import { runProducer, type ProducerEvent } from "../../worker-runtime/src/producer.ts";
import type { Executor } from "../../worker-runtime/src/executor.ts";
import type { WorkerApi } from "../../worker-runtime/src/api.ts";
import { EMPTY_OUTPUT_HASH } from "../../worker-runtime/src/sandbox.ts";
import { createTRPCClient, httpBatchLink, httpLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { NodeEventSource } from "../../worker-runtime/src/node/event-source.ts";
import { transportFetch } from "../../worker-runtime/src/node/http-transport.ts";
import type { AppRouter } from "../src/index.ts";
import { clientFor, freePort, PUBLIC_URL, signUp, signUpSession, TEST_MARKET_ENV } from "../../../test/support/market.ts";
import { moduleImporting } from "../../../test/support/wasm.ts";
import type { Books } from "./audit.ts";
import type { StatementCost, WalFlushes } from "./statements.ts";
import type { ServerTime } from "./server-times.ts";
import type { WalSplit } from "./wal-split.ts";
import { MANAGER_NODE_FLAGS } from "../src/node-flags.ts";
import { procStat } from "../src/db/proc.ts";

/** The market's settings for a bench: room for many jobs, tasks and credits per user. */
export const BENCH_MARKET_ENV = {
  ...TEST_MARKET_ENV,
  PUBLIC_URL,
  STARTING_CREDITS: "100000",
  MARKET_RESERVE: "1000000000000",
  SUBMISSIONS_PER_MINUTE: "1000000",
  QUEUED_TASKS_PER_USER: "10000000",
  STREAMS_PER_USER: "100000",
  // /healthz on a thread of its own, as an operator runs it for a load balancer (http/health-thread.ts).
  MARKET_HEALTH_PORT: "0",
};

/** The bench's options: numbers named in `defaults`, and the flags --json, --profile and any in `flags`. */
export function args<D extends Record<string, number>, F extends string = never>(defaults: D, flags: readonly F[] = []) {
  const numbers: Record<string, number> = { ...defaults };
  const set: Record<string, boolean> = { json: false, profile: false, ...Object.fromEntries(flags.map((f) => [f, false])) };
  const argv = process.argv.slice(2);
  const usage = `options: ${Object.keys(defaults).map((k) => `--${k} N`).join(" ")} ${Object.keys(set).map((f) => `--${f}`).join(" ")}`;
  // A wrong option is the user's mistake, said in one line (not a stack trace), and nothing runs.
  const wrong = (what: string) => {
    console.error(`${what}\n${usage}`);
    process.exit(2);
  };
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]!.replace(/^--/, "");
    if (name in set) set[name] = true;
    else if (name in defaults) {
      const value = Number(argv[++i]);
      if (argv[i] === undefined || !Number.isFinite(value) || value < 0) wrong(`--${name} needs a number of 0 or more, not ${argv[i] === undefined ? "nothing" : JSON.stringify(argv[i])}`);
      numbers[name] = value;
    } else wrong(`unknown option ${argv[i]}`);
  }
  return { ...numbers, ...set } as D & { json: boolean; profile: boolean } & Record<F, boolean>;
}

// ---- the manager's process

export interface BenchManager {
  url: string;
  /** The PostgreSQL it runs on, as its application role: other managers of the same market join it there. */
  databaseUrl: string;
  /** The health thread's address (MARKET_HEALTH_PORT), or null when the manager has none. */
  healthUrl: string | null;
  outbox: string;
  pid: number;
  /** CPU time (user + system) of the manager (all its threads, and its main thread alone) and of its PostgreSQL, in ms. */
  cpu(): { managerMs: number; mainThreadMs: number; postgresMs: number };
  /** The write-ahead log's position now (pg_current_wal_lsn), in bytes: two of them apart are what a load wrote to the log. */
  walLsn(): Promise<bigint>;
  /** The log between two positions (walLsn), split by relation and record kind (wal-split.ts); the embedded PostgreSQL only. */
  walSplit(from: bigint, to: bigint): Promise<WalSplit>;
  /** Runs statements on the embedded server as its owner, one after the other (a setting, a checkpoint). */
  asOwner(sql: string[]): Promise<void>;
  /** The managers of its market it saw alive at its last stamp, itself included (1 in a market of one). */
  managersAlive(): Promise<number>;
  /** The manager's resident memory now, in MB. */
  rssMb(): number;
  /** The books, the machines departed for missed heartbeats, and how late the manager's event loop ran (ms). */
  audit(jobIds: string[]): Promise<Audit>;
  /** Times the manager's own handling of each kind of call from now on (the audit's `serverMs`). */
  callsStart(): Promise<void>;
  /** With `statements`: counts PostgreSQL's statements from now on (the audit says what they cost). */
  statementsStart(): Promise<void>;
  /** Profiles the manager from now until `profileStop`, which writes the profile to `file`. */
  profileStart(): Promise<void>;
  profileStop(file: string): Promise<void>;
  stop(): Promise<void>;
}

const TICK_MS = 1000 / 100; // /proc reports CPU in clock ticks of 10 ms on Linux

/** A process's CPU, all its threads; of one thread with `<pid>/task/<tid>`. */
export function procCpuMs(pid: number | string): number {
  // Fields 14 and 15 of proc(5)'s stat: user and system time.
  const fields = procStat(pid);
  return fields ? (Number(fields[11]) + Number(fields[12])) * TICK_MS : 0;
}

/** Every process under `root` (PostgreSQL's postmaster and backends under the manager). */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const fields = procStat(name); // null: gone meanwhile
    if (fields) parent.set(Number(name), Number(fields[1]));
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [child, p] of parent) if (p === pid) (out.push(child), walk(child));
  };
  walk(root);
  return out;
}

/** What the bench's manager says at the end of a load: the books, departures, its event loop, its own time per call, PostgreSQL's statements. */
export interface Audit {
  books: Books;
  departed: number;
  loopDelayMs: { p50: number; p99: number; max: number };
  /** By procedure, how long the manager took (server-times.ts), once callsStart was asked. */
  serverMs?: Record<string, ServerTime>;
  /** The journal's statements by kind and stage ("reports.wait", "reports.write", "admission.write", ...) and each report's wait for its group ("reports.group"), once callsStart was asked. */
  journalMs?: Record<string, ServerTime>;
  statements?: StatementCost[];
  /** With `statements`: the log's flushes the commits waited for, from the load's start. */
  walFlushes?: WalFlushes;
}

export async function startBenchManager(options: { profileDir?: string; env?: Record<string, string>; statements?: boolean } = {}): Promise<BenchManager> {
  // BENCH_MANAGER_FLAGS: Node options added for the manager's process alone (e.g. `--trace-gc`; a later option wins over MANAGER_NODE_FLAGS).
  const execArgv = ["--import", "tsx", ...MANAGER_NODE_FLAGS, ...(process.env.BENCH_MANAGER_FLAGS?.split(" ").filter(Boolean) ?? []), ...(options.profileDir ? ["--cpu-prof", "--cpu-prof-dir", options.profileDir] : [])];
  const pgPort = String(await freePort());
  const child: ChildProcess = fork(join(import.meta.dirname, "manager.ts"), [], {
    execArgv,
    // DATABASE_URL, when set, is the PostgreSQL the bench's manager uses instead of its own embedded one.
    env: {
      ...process.env,
      BENCH_MARKET_ENV: JSON.stringify({
        ...BENCH_MARKET_ENV,
        MARKET_PG_PORT: pgPort,
        ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
        // MARKET_PG_BATCH=0: the embedded PostgreSQL scheduled as ordinary processes, to compare.
        ...(process.env.MARKET_PG_BATCH ? { MARKET_PG_BATCH: process.env.MARKET_PG_BATCH } : {}),
        ...(options.statements ? { MARKET_PG_STATEMENTS: "1" } : {}),
        ...options.env,
      }),
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<{ port: number; healthPort: number | null; outbox: string; databaseUrl: string }>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the bench's market manager exited with ${code}`)));
    child.on("message", (m: { kind: string; port: number; healthPort: number | null; outbox: string; databaseUrl: string }) => m.kind === "ready" && resolve(m));
  });
  const pid = child.pid!;
  const ask = (msg: { kind: string; file?: string }, answer = "profiled") =>
    new Promise<void>((resolve) => {
      const on = (m: { kind: string }) => {
        if (m.kind !== answer) return;
        child.off("message", on);
        resolve();
      };
      child.on("message", on);
      child.send(msg);
    });
  let pgPids: number[] = [];
  return {
    url: `http://127.0.0.1:${ready.port}`,
    databaseUrl: ready.databaseUrl,
    healthUrl: ready.healthPort === null ? null : `http://127.0.0.1:${ready.healthPort}`,
    outbox: ready.outbox,
    pid,
    cpu() {
      // Backends come and go with connections: look again each time.
      pgPids = descendants(pid);
      return { managerMs: procCpuMs(pid), mainThreadMs: procCpuMs(`${pid}/task/${pid}`), postgresMs: pgPids.reduce((s, p) => s + procCpuMs(p), 0) };
    },
    walLsn() {
      return new Promise((resolve) => {
        const on = (m: { kind: string; lsn: string }) => {
          if (m.kind !== "wal") return;
          child.off("message", on);
          resolve(lsnBytes(m.lsn));
        };
        child.on("message", on);
        child.send({ kind: "wal" });
      });
    },
    walSplit(from, to) {
      return new Promise((resolve, reject) => {
        const on = (m: { kind: string; split?: WalSplit; error?: string }) => {
          if (m.kind !== "wal-split") return;
          child.off("message", on);
          if (m.split) resolve(m.split);
          else reject(new Error(`the log's split: ${m.error}`));
        };
        child.on("message", on);
        child.send({ kind: "wal-split", from: lsnText(from), to: lsnText(to) });
      });
    },
    asOwner(sql) {
      return new Promise((resolve, reject) => {
        const on = (m: { kind: string; error?: string }) => {
          if (m.kind !== "owner-sql") return;
          child.off("message", on);
          if (m.error) reject(new Error(m.error));
          else resolve();
        };
        child.on("message", on);
        child.send({ kind: "owner-sql", sql });
      });
    },
    managersAlive() {
      return new Promise((resolve) => {
        const on = (m: { kind: string; alive: number }) => {
          if (m.kind !== "managers") return;
          child.off("message", on);
          resolve(m.alive);
        };
        child.on("message", on);
        child.send({ kind: "managers" });
      });
    },
    rssMb() {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return m ? Number(m[1]) / 1024 : 0;
    },
    audit(jobIds) {
      return new Promise((resolve) => {
        const on = (m: Audit & { kind: string }) => {
          if (m.kind !== "audit") return;
          child.off("message", on);
          resolve(m);
        };
        child.on("message", on);
        child.send({ kind: "audit", jobIds });
      });
    },
    profileStart: () => ask({ kind: "profile-start" }),
    statementsStart: () => (options.statements ? ask({ kind: "statements-start" }, "statements-started") : Promise.resolve()),
    callsStart: () => ask({ kind: "calls-start" }, "calls-started"),
    profileStop: (file) => ask({ kind: "profile-stop", file }),
    stop() {
      return new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.send({ kind: "stop" });
      });
    },
  };
}

/** A log position as PostgreSQL writes it ("16/B374D848": the high and low 32 bits in hex), in bytes. */
export function lsnBytes(lsn: string): bigint {
  const [hi, lo] = lsn.split("/");
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

/** A log position in bytes as PostgreSQL writes it. */
export const lsnText = (bytes: bigint) => `${(bytes >> 32n).toString(16).toUpperCase()}/${(bytes & 0xffffffffn).toString(16).toUpperCase()}`;

// ---- people

export type Consumer = ReturnType<typeof webClientFor>;

/**
 * A client with the web app's links (apps/web/lib/providers.tsx): a submission or a quote alone,
 * every other call batched with those made in the same tick (at most 10 to a request), so a
 * consumer's job page reaches the market as the page's requests do. It goes over the worker's
 * keep-alive transport, which keeps the load generator light.
 */
export function webClientFor(url: string, headers: Record<string, string>) {
  const endpoint = `${url}/api/trpc`;
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({ url: endpoint, EventSource: NodeEventSource, eventSourceOptions: { headers } }),
        false: splitLink({
          condition: (op) => op.path === "jobs.submit" || op.path === "jobs.quote",
          true: httpLink({ url: endpoint, headers, fetch: transportFetch }),
          false: httpBatchLink({ url: endpoint, headers, maxItems: 10, fetch: transportFetch }),
        }),
      }),
    ],
  });
}

export async function consumer(manager: BenchManager, email: string): Promise<Consumer> {
  return webClientFor(manager.url, await signUpSession(manager.url, email, ["consumer"], manager.outbox));
}

/** A producer's API token, as a Node worker is started with. */
export async function producerToken(manager: BenchManager, email: string): Promise<string> {
  const producer = await signUp(manager.url, email, ["producer"]);
  return (await producer.account.tokens.create.mutate({ name: "bench" })).token;
}

export { clientFor };

/** The smallest valid job module: every task exits at once with empty output. */
const MODULE_BASE64 = Buffer.from(moduleImporting("wasi_snapshot_preview1", "proc_exit")).toString("base64");

/**
 * A simulated machine's memory per slot. The engine reserves a task's memory on its machine from
 * placement on (queued tasks too), so a machine holds at most slots x this / TRIVIAL_TASK_MB
 * placed tasks: 16,384 for a 4-slot machine, room for any job the benches submit on one worker.
 */
export const BENCH_SLOT_MEMORY_MB = 4096;
/**
 * What a simulated machine asks per second of run, in credits: enough that a trivial run (reported
 * as 1 ms) is paid a few micro-credits, so every report moves money (a payment entry and its two
 * postings) as a real one does; at a ten-thousandth of a credit a run rounded to nothing.
 */
export const BENCH_PRICE_PER_SECOND = 0.01;
const TRIVIAL_TASK_MB = 1;

export function trivialJob(name: string, tasks: number) {
  return {
    name,
    source: { kind: "upload" as const, moduleBase64: MODULE_BASE64, tasks: Array.from({ length: tasks }, (_, i) => ({ args: [String(i)] })), workPerTask: 0.001, memoryMbPerTask: TRIVIAL_TASK_MB },
    benefit: { kind: "constant" as const, value: 100 },
  };
}

/** A job the market did not admit at once, with the engine's reasons: a bench waiting for it would wait forever. */
export class NotAdmitted extends Error {
  constructor(name: string, decision: { outcome: string; reasons: unknown[] }) {
    super(`job "${name}" was ${decision.outcome}, not admitted: ${JSON.stringify(decision.reasons)}`);
  }
}

/** Submits a trivial job and returns its id, or throws NotAdmitted naming the decision's reasons. */
export async function submitTrivial(buyer: Consumer, name: string, tasks: number): Promise<string> {
  const { jobId, decision } = await buyer.jobs.submit.mutate(trivialJob(name, tasks));
  if (decision.outcome !== "admitted") throw new NotAdmitted(name, decision);
  return jobId;
}

// ---- figures

export class Timings {
  private samples = new Map<string, number[]>();
  /** When each sample's call began (performance.now()), in the order of `samples`. */
  private starts = new Map<string, number[]>();
  /** A call of `kind` took `ms`, ending now. */
  add(kind: string, ms: number) {
    this.addAt(kind, ms, performance.now() - ms);
  }
  /** A call of `kind` that began at `start` (performance.now()) took `ms`. */
  addAt(kind: string, ms: number, start: number) {
    let list = this.samples.get(kind);
    if (!list) (this.samples.set(kind, (list = [])), this.starts.set(kind, []));
    list.push(ms);
    this.starts.get(kind)!.push(start);
  }
  /** A kind's percentiles, of the calls that began at `since` (performance.now()) or later, and before `until`, when given. */
  summary(kind: string, since?: number, until = Infinity) {
    const all = this.samples.get(kind) ?? [];
    const starts = this.starts.get(kind) ?? [];
    const list = (since === undefined ? [...all] : all.filter((_, i) => starts[i]! >= since && starts[i]! < until)).sort((a, b) => a - b);
    const at = (q: number) => (list.length ? round(list[Math.min(list.length - 1, Math.floor(q * list.length))]!) : null);
    return { count: list.length, p50: at(0.5), p99: at(0.99), max: list.length ? round(list[list.length - 1]!) : null };
  }
  /** A kind's latencies as the benches print them: `{ p50, p99, count }`. */
  latency(kind: string, since?: number, until?: number) {
    const s = this.summary(kind, since, until);
    return { p50: s.p50, p99: s.p99, count: s.count };
  }
  clear() {
    this.samples.clear();
    this.starts.clear();
  }
}

export const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

// ---- simulated workers

/** Finishes every task at once with empty output and its true hash: no sandbox runs. */
function instantExecutor(slots: number): Executor {
  return {
    slots,
    run: async () => ({ exitCode: 0, stdout: new Uint8Array(0), stderr: new Uint8Array(0), outputHash: EMPTY_OUTPUT_HASH, elapsedMs: 1 }),
    benchmark: async () => ({ speed: 1, durationMs: 1, iterations: 1 }) as never,
    close: async () => {},
  };
}

/** The worker's API with every call timed; each lease handed out is told to `onLease`. */
function timedApi(api: WorkerApi, timings: Timings, onLease: (jobId: string, at: number) => void): WorkerApi {
  const timed =
    <I, O>(kind: string, call: (input: I) => Promise<O>) =>
    async (input: I) => {
      const start = performance.now();
      try {
        return await call(input);
      } finally {
        timings.add(kind, performance.now() - start);
      }
    };
  return {
    ...api,
    register: timed("register", api.register),
    heartbeat: timed("heartbeat", api.heartbeat),
    report: timed("report", api.report),
    // A call of several reports: each of them waited as long as the call.
    ...(api.reportMany
      ? {
          reportMany: async (input) => {
            const start = performance.now();
            try {
              const answer = await api.reportMany!(input);
              // Leases that came with the reports (the worker asked for its next tasks in the same call).
              const at = performance.now();
              for (const l of answer.leases ?? []) onLease(l.jobId, at);
              return answer;
            } finally {
              for (let i = 0; i < input.reports.length; i++) timings.add("report", performance.now() - start);
            }
          },
        }
      : {}),
    module: api.module,
    depart: api.depart,
    // Leases the market sent on the work stream (the worker was idle): held once the event is read.
    ...(api.watchWork
      ? {
          watchWork: (input, handlers) =>
            api.watchWork!(input, {
              ...handlers,
              offer: (offer) => {
                const at = performance.now();
                for (const l of offer.leases ?? []) onLease(l.jobId, at);
                handlers.offer(offer);
              },
            }),
        }
      : {}),
    lease: async (input) => {
      const start = performance.now();
      const answer = await timed("lease", api.lease)(input);
      const at = performance.now();
      // A lease that found nothing: a wake or a freed slot that asked in vain.
      if (answer.leases.length === 0) timings.add("emptyLease", at - start);
      for (const l of answer.leases) onLease(l.jobId, at);
      return answer;
    },
  };
}

export interface Fleet {
  /** Machines registered and with a live work stream. */
  ready(): number;
  accepted(): number;
  refused(): number;
  /** Runs the workers reported as failed, by cause: the market pays them and places the task again, so their tasks carry a second payment. */
  failedRuns(): Record<string, number>;
  errors(): string[];
  stop(): Promise<void>;
}

export function startFleet(options: {
  url: string;
  tokens: string[];
  machines: number;
  slots: number;
  timings: Timings;
  onLease?: (jobId: string, at: number) => void;
  onReported?: () => void;
  /** Machines start this far apart, as a fleet joining a market does. */
  staggerMs?: number;
  /** In a market of several managers: machine i asks to be held by managers[i % length]. */
  managers?: string[];
}): Fleet {
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // every machine's loop waits on it
  let ready = 0;
  let accepted = 0;
  let refused = 0;
  const failedRuns: Record<string, number> = {};
  const errors: string[] = [];
  const runs: Promise<unknown>[] = [];
  for (let i = 0; i < options.machines; i++) {
    const token = options.tokens[i % options.tokens.length]!;
    const api = timedApi(createTrpcApi(options.url, token), options.timings, options.onLease ?? (() => {}));
    const onEvent = (e: ProducerEvent) => {
      if (e.type === "stream" && e.state === "live") ready++;
      else if (e.type === "stream" && e.state !== "live") ready--;
      else if (e.type === "finished" && (e.exitCode !== 0 || e.error)) {
        // The instant executor never fails: a failed run here is the worker's own (a module it could not fetch).
        const cause = e.error?.code ?? "nonzero-exit";
        failedRuns[cause] = (failedRuns[cause] ?? 0) + 1;
      } else if (e.type === "reported") {
        if (e.accepted) accepted++;
        else refused++;
        options.onReported?.();
      } else if (e.type === "error" && errors.length < 20) errors.push(`${e.stage}: ${e.message}`);
    };
    const start = async () => {
      if (options.staggerMs) await new Promise((r) => setTimeout(r, i * options.staggerMs!));
      return runProducer({
        api,
        executor: instantExecutor(options.slots),
        machine: {
          name: `bench-${i}`,
          kind: "opportunistic",
          speed: 1,
          memoryPerSlotMb: BENCH_SLOT_MEMORY_MB,
          bandwidthBytesPerSecond: 1e8,
          pricePerSecond: BENCH_PRICE_PER_SECOND,
          userAgent: "bench",
          ...(options.managers?.length ? { manager: options.managers[i % options.managers.length] } : {}),
        },
        signal: stop.signal,
        onEvent,
        registerAttempts: 1000,
      });
    };
    runs.push(start().catch((e) => errors.push(`producer: ${e instanceof Error ? e.message : String(e)}`)));
  }
  return {
    ready: () => ready,
    accepted: () => accepted,
    refused: () => refused,
    failedRuns: () => failedRuns,
    errors: () => errors,
    async stop() {
      stop.abort();
      await Promise.allSettled(runs);
    },
  };
}

export async function until(what: string, test: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 20) {
  const end = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Where a bench's profile of `kind` goes in `dir`: its kind and when it was written. */
export const profileFile = (dir: string, kind: string) => join(dir, `${kind}-${new Date().toISOString().replace(/[:.]/g, "-")}.cpuprofile`);

export function print(figures: Record<string, unknown>, json: boolean) {
  if (json) console.log(JSON.stringify(figures));
  else console.log(JSON.stringify(figures, null, 2));
}

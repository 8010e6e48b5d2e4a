// The Market Manager as the benches run it: its own process (so its CPU time is its own), its own
// embedded PostgreSQL in a temporary folder, the real HTTP API on a free port. The parent talks to
// it over the IPC channel: it is told the port, asks for the audit of the books, and stops it.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { loadConfig, startMarketManager } from "../src/index.ts";
import { audit } from "./audit.ts";
import { statementCounts } from "./statements.ts";
import { serverTimes } from "./server-times.ts";
import { opsOf } from "../src/ops/ops.ts";
import { Session } from "node:inspector/promises";
import { readFileSync } from "node:fs";
import { walSplit } from "./wal-split.ts";
import { withClient } from "../src/db/sql/owner.ts";

const dataDir = mkdtempSync(join(tmpdir(), "cyclemarket-bench-"));
chmodSync(dataDir, 0o755); // PostgreSQL runs as its own user when we are root
const env = JSON.parse(process.env.BENCH_MARKET_ENV ?? "{}") as Record<string, string>;
const cfg = loadConfig({ MARKET_DATA_DIR: dataDir, MARKET_PORT: "0", LOG_LEVEL: "silent", ...env });
const departures: string[] = [];
// How late the manager's event loop ran its timers: a call that arrived waited about as long to be read.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const ms = (ns: number) => Math.round(ns / 1e4) / 100;
const manager = await startMarketManager(cfg, (line) => {
  if (/departed \(missed-heartbeats\)/.test(line)) departures.push(line);
  if (process.env.BENCH_MARKET_LOG) process.stderr.write(`[market] ${line}\n`);
});

async function stop() {
  await manager.stop();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}

/** The embedded server's owner (a superuser: pg_walinspect, ALTER SYSTEM, CHECKPOINT): its password is kept beside the data. */
function ownerUrl() {
  const url = new URL(manager.services.database.url);
  url.username = "cyclemarket";
  url.password = encodeURIComponent(readFileSync(join(dataDir, "postgres", "owner-password"), "utf8").trim());
  return url.toString();
}

/** A profile of one phase of a bench only (its throughput), not of the start and the books. */
let profiler: Session | null = null;
async function profile(msg: { kind: string; file?: string }) {
  if (msg.kind === "profile-start") {
    profiler = new Session();
    profiler.connect();
    await profiler.post("Profiler.enable");
    await profiler.post("Profiler.start");
  } else if (profiler) {
    const { profile } = await profiler.post("Profiler.stop");
    writeFileSync(msg.file!, JSON.stringify(profile));
    profiler.disconnect();
    profiler = null;
  }
  process.send!({ kind: "profiled" });
}

/** What PostgreSQL's statements cost from the load's start (the bench's --statements). */
let statements: Awaited<ReturnType<typeof statementCounts>> | null = null;
/** How long the manager took over each kind of call from the load's start. */
let calls: Awaited<ReturnType<typeof serverTimes>> | null = null;
/** The journal's statements by kind and stage, and the reports' wait for their group, from the load's start. */
let journal: Awaited<ReturnType<typeof serverTimes>>[] = [];

process.on("message", (msg: { kind: string; jobIds?: string[]; file?: string }) => {
  if (msg.kind === "profile-start" || msg.kind === "profile-stop") void profile(msg);
  else if (msg.kind === "statements-start") void statementCounts(manager.services.db).then((s) => ((statements = s), process.send!({ kind: "statements-started" })));
  else if (msg.kind === "calls-start") {
    const { metrics } = opsOf(manager.services.market);
    void Promise.all([serverTimes(metrics.api), serverTimes(metrics.journal, (l) => `${l.kind}.${l.stage}`), serverTimes(metrics.reportGroupWait, () => "reports.group")]).then(([c, ...j]) => {
      calls = c;
      journal = j;
      process.send!({ kind: "calls-started" });
    });
  }
  else if (msg.kind === "managers") process.send!({ kind: "managers", alive: manager.services.market.managers?.alive().length ?? 1 });
  else if (msg.kind === "wal") {
    // Where the write-ahead log stands: the bench subtracts two of these around a load.
    void manager.services.db.$queryRawUnsafe<{ lsn: string }[]>("SELECT pg_current_wal_lsn()::text AS lsn").then(([row]) => process.send!({ kind: "wal", lsn: row!.lsn }));
  } else if (msg.kind === "wal-split") {
    const { from, to } = msg as unknown as { from: string; to: string };
    void walSplit(ownerUrl(), from, to).then(
      (split) => process.send!({ kind: "wal-split", split }),
      (e: Error) => process.send!({ kind: "wal-split", error: e.message }),
    );
  } else if (msg.kind === "owner-sql") {
    // What a bench does to the server itself (a setting, a checkpoint), as its owner.
    const { sql } = msg as unknown as { sql: string[] };
    void withClient(ownerUrl(), async (c) => {
      for (const q of sql) await c.query(q);
    }).then(
      () => process.send!({ kind: "owner-sql" }),
      (e: Error) => process.send!({ kind: "owner-sql", error: e.message }),
    );
  } else if (msg.kind === "audit") {
    const loopDelayMs = { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) };
    void (async () => {
      const costs = statements ? await statements.since() : undefined;
      const walFlushes = statements ? await statements.walFlushesSince() : undefined;
      const serverMs = calls ? await calls.since() : undefined;
      const journalMs = journal.length ? Object.assign({}, ...(await Promise.all(journal.map((j) => j.since())))) : undefined;
      const books = await audit(manager.services.db, msg.jobIds ?? []);
      process.send!({ kind: "audit", books, departed: departures.length, loopDelayMs, ...(serverMs ? { serverMs } : {}), ...(journalMs ? { journalMs } : {}), ...(costs ? { statements: costs, walFlushes } : {}) });
    })();
  } else if (msg.kind === "stop") void stop();
});
process.on("SIGTERM", () => void stop());
// The bench that started this market is gone (killed, or its output's reader closed): so is its load.
process.on("disconnect", () => void stop());
loopDelay.reset(); // from here on: the bench's load, not the start
// The database's address, for the other managers of a bench of several (dispatch.ts --managers).
process.send!({ kind: "ready", port: manager.port, healthPort: manager.healthPort, outbox: join(dataDir, "outbox.jsonl"), databaseUrl: manager.services.database.url });

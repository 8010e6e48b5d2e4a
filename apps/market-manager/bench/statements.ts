// What PostgreSQL spent its time on during a bench (--statements): the market's statements as
// pg_stat_statements counts them (the embedded server loads it when MARKET_PG_STATEMENTS is "1"),
// from a snapshot taken when the load began to its end, the costliest first. A statement's time is
// its planning's and its execution's (the server tracks planning for the bench); its commit is in
// neither. The market's role reads its own statements' counts. `walFlushes` is what the commits
// waited for: the flushes of the write-ahead log the server's connections made, and their time
// (pg_stat_io; the bench's server times them, track_wal_io_timing). A connection reports those at
// most once a second (ten seconds after it fell idle), so the load's last second may be missing,
// and a load of a second or less can show none.
import type { Db } from "../src/db/client.ts";

interface Counted {
  queryid: string;
  query: string;
  calls: number;
  totalMs: number;
  planMs: number;
  rows: number;
  walRecords: number;
  walFpi: number;
  walBytes: number;
}

export interface StatementCost {
  /** The statement's text, its whitespace folded, cut at 160 characters. */
  query: string;
  calls: number;
  /** Planning and execution, of every call. */
  totalMs: number;
  /** Of which planning: near 0 for a statement prepared once whose generic plan is reused. */
  planMs: number;
  meanMs: number;
  rows: number;
  /** What it wrote to the write-ahead log: records, of which whole pages (a page's first change after a checkpoint), and bytes. */
  walRecords: number;
  walFpi: number;
  walBytes: number;
}

const read = (db: Db) =>
  db.$queryRawUnsafe<Counted[]>(
    `SELECT queryid::text, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query, calls::float8 AS calls, total_exec_time + total_plan_time AS "totalMs", total_plan_time AS "planMs", rows::float8 AS rows, wal_records::float8 AS "walRecords", wal_fpi::float8 AS "walFpi", wal_bytes::float8 AS "walBytes" FROM pg_stat_statements`,
  );

/** The log's flushes by the connections (not the server's own writer, nor the zeroing of a new log file), and their time. */
export interface WalFlushes {
  flushes: number;
  /** From a flush's call to its return: the disk's answer and the wait for a core after it. */
  totalMs: number;
  meanMs: number;
  /** What the connections wrote to the log, in bytes. */
  bytes: number;
}

const flushes = async (db: Db) =>
  (
    await db.$queryRawUnsafe<Omit<WalFlushes, "meanMs">[]>(
      `SELECT coalesce(sum(fsyncs), 0)::float8 AS flushes, coalesce(sum(fsync_time), 0)::float8 AS "totalMs", coalesce(sum(write_bytes), 0)::float8 AS bytes FROM pg_stat_io WHERE object = 'wal' AND backend_type = 'client backend' AND context = 'normal'`,
    )
  )[0]!;

/** Counts so far; `since` gives what each statement cost from then on, `walFlushesSince` the log's flushes. */
export async function statementCounts(db: Db) {
  const before = new Map((await read(db)).map((r) => [r.queryid, r]));
  const flushesBefore = await flushes(db);
  return {
    async walFlushesSince(): Promise<WalFlushes> {
      const now = await flushes(db);
      const count = now.flushes - flushesBefore.flushes;
      const totalMs = now.totalMs - flushesBefore.totalMs;
      return { flushes: count, totalMs: Math.round(totalMs), meanMs: count ? Math.round((totalMs / count) * 1000) / 1000 : 0, bytes: now.bytes - flushesBefore.bytes };
    },
    async since(top = 15): Promise<StatementCost[]> {
      const now = await read(db);
      return now
        .map((r) => {
          const b = before.get(r.queryid);
          const calls = r.calls - (b?.calls ?? 0);
          const totalMs = r.totalMs - (b?.totalMs ?? 0);
          return { query: r.query, calls, totalMs: Math.round(totalMs), planMs: Math.round(r.planMs - (b?.planMs ?? 0)), meanMs: calls ? Math.round((totalMs / calls) * 1000) / 1000 : 0, rows: r.rows - (b?.rows ?? 0), walRecords: r.walRecords - (b?.walRecords ?? 0), walFpi: r.walFpi - (b?.walFpi ?? 0), walBytes: r.walBytes - (b?.walBytes ?? 0) };
        })
        .filter((s) => s.calls > 0)
        .sort((a, b) => b.totalMs - a.totalMs)
        .slice(0, top);
    },
  };
}

// What PostgreSQL spent its time on during a bench (--statements): the market's statements as
// pg_stat_statements counts them (the embedded server loads it when MARKET_PG_STATEMENTS is "1"),
// from a snapshot taken when the load began to its end, the costliest first. The market's role
// reads its own statements' counts.
import type { Db } from "../src/db/client.ts";

interface Counted {
  queryid: string;
  query: string;
  calls: number;
  totalMs: number;
  rows: number;
}

export interface StatementCost {
  /** The statement's text, its whitespace folded, cut at 160 characters. */
  query: string;
  calls: number;
  totalMs: number;
  meanMs: number;
  rows: number;
}

const read = (db: Db) =>
  db.$queryRawUnsafe<Counted[]>(
    `SELECT queryid::text, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query, calls::float8 AS calls, total_exec_time AS "totalMs", rows::float8 AS rows FROM pg_stat_statements`,
  );

/** Counts so far; `since` gives what each statement cost from then on. */
export async function statementCounts(db: Db) {
  const before = new Map((await read(db)).map((r) => [r.queryid, r]));
  return {
    async since(top = 15): Promise<StatementCost[]> {
      const now = await read(db);
      return now
        .map((r) => {
          const b = before.get(r.queryid);
          const calls = r.calls - (b?.calls ?? 0);
          const totalMs = r.totalMs - (b?.totalMs ?? 0);
          return { query: r.query, calls, totalMs: Math.round(totalMs), meanMs: calls ? Math.round((totalMs / calls) * 1000) / 1000 : 0, rows: r.rows - (b?.rows ?? 0) };
        })
        .filter((s) => s.calls > 0)
        .sort((a, b) => b.totalMs - a.totalMs)
        .slice(0, top);
    },
  };
}

// Where a load's write-ahead log went (the dispatch bench's --wal): the log between two positions
// read back by pg_walinspect, which ships with PostgreSQL, as the database's owner (its functions
// are the superuser's). Each record's bytes are its whole length in the log (end less start, so
// alignment included); a record is counted under the relation of its first block (a heap update
// names the old and the new page of one table, a b-tree insert one leaf), and records that name no
// block (commits, mostly) under "(none)". Full-page images are counted apart as well: they are the
// part of a record a checkpoint causes, not the change itself.
import pg from "pg";

export interface WalShare {
  /** A table or index, or "(none)" for records naming no block; or a resource manager's record kind. */
  name: string;
  records: number;
  bytes: number;
  /** Of which full-page images. */
  fpiBytes: number;
}

export interface WalSplit {
  bytes: number;
  records: number;
  /** By relation, then the record kinds within it, the largest first. */
  byRelation: (WalShare & { kinds: WalShare[] })[];
  /** By resource manager and record kind ("Heap/HOT_UPDATE", "Btree/INSERT_LEAF", "Transaction/COMMIT"), the largest first. */
  byKind: WalShare[];
}

const SPLIT_SQL = `
  WITH blocks AS (
    SELECT start_lsn, end_lsn, block_id, resource_manager, record_type, block_fpi_length,
      CASE WHEN reltablespace = (SELECT oid FROM pg_tablespace WHERE spcname = 'pg_default') THEN 0 ELSE reltablespace END AS tablespace, relfilenode
    FROM pg_get_wal_block_info($1::pg_lsn, $2::pg_lsn, false)
  ), records AS (
    SELECT start_lsn, (end_lsn - start_lsn)::float8 AS bytes, sum(block_fpi_length)::float8 AS fpi,
      (array_agg(resource_manager || '/' || record_type))[1] AS kind,
      (array_agg(coalesce(pg_filenode_relation(tablespace, relfilenode)::regclass::text, 'filenode ' || relfilenode) ORDER BY block_id))[1] AS relation
    FROM blocks GROUP BY start_lsn, end_lsn
  )
  SELECT relation AS name, kind, count(*)::float8 AS records, sum(bytes)::float8 AS bytes, sum(fpi)::float8 AS "fpiBytes"
  FROM records GROUP BY relation, kind`;

const KINDS_SQL = `
  SELECT "resource_manager/record_type" AS name, count::float8 AS records, combined_size::float8 AS bytes, fpi_size::float8 AS "fpiBytes"
  FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE count > 0`;

/** The log from `from` to `to` (positions as PostgreSQL writes them), split by relation and by record kind. */
export async function walSplit(ownerUrl: string, from: string, to: string): Promise<WalSplit> {
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    await client.query(`CREATE EXTENSION IF NOT EXISTS pg_walinspect`);
    const rows = (await client.query<{ name: string; kind: string } & Omit<WalShare, "name">>(SPLIT_SQL, [from, to])).rows;
    const byKind = (await client.query<WalShare>(KINDS_SQL, [from, to])).rows.sort((a, b) => b.bytes - a.bytes);
    const total = Number((await client.query<{ bytes: string }>(`SELECT ($2::pg_lsn - $1::pg_lsn)::text AS bytes`, [from, to])).rows[0]!.bytes);
    const relations = new Map<string, WalShare & { kinds: WalShare[] }>();
    for (const r of rows) {
      let rel = relations.get(r.name);
      if (!rel) relations.set(r.name, (rel = { name: r.name, records: 0, bytes: 0, fpiBytes: 0, kinds: [] }));
      rel.records += r.records;
      rel.bytes += r.bytes;
      rel.fpiBytes += r.fpiBytes;
      rel.kinds.push({ name: r.kind, records: r.records, bytes: r.bytes, fpiBytes: r.fpiBytes });
    }
    const records = byKind.reduce((s, k) => s + k.records, 0);
    const attributed = [...relations.values()].reduce((s, r) => s + r.bytes, 0);
    const withBlocks = [...relations.values()].reduce((s, r) => s + r.records, 0);
    // What names no block: commits and the like, and the log's own page headers.
    relations.set("(none)", { name: "(none)", records: records - withBlocks, bytes: total - attributed, fpiBytes: 0, kinds: [] });
    for (const r of relations.values()) r.kinds.sort((a, b) => b.bytes - a.bytes);
    return { bytes: total, records, byRelation: [...relations.values()].sort((a, b) => b.bytes - a.bytes), byKind };
  } finally {
    await client.end();
  }
}

/** Several splits added together, and each figure divided by `per` (bytes per task). */
export function sumSplits(splits: WalSplit[], per: number) {
  const add = (into: Map<string, WalShare>, s: WalShare) => {
    const t = into.get(s.name) ?? { name: s.name, records: 0, bytes: 0, fpiBytes: 0 };
    into.set(s.name, { name: s.name, records: t.records + s.records, bytes: t.bytes + s.bytes, fpiBytes: t.fpiBytes + s.fpiBytes });
  };
  const rels = new Map<string, WalShare>();
  const kindsOf = new Map<string, Map<string, WalShare>>();
  const kinds = new Map<string, WalShare>();
  for (const split of splits) {
    for (const r of split.byRelation) {
      add(rels, r);
      const k = kindsOf.get(r.name) ?? new Map();
      kindsOf.set(r.name, k);
      for (const kind of r.kinds) add(k, kind);
    }
    for (const k of split.byKind) add(kinds, k);
  }
  const per1 = (s: WalShare) => ({ name: s.name, recordsPerTask: Math.round((s.records / per) * 100) / 100, bytesPerTask: Math.round(s.bytes / per), fpiBytesPerTask: Math.round(s.fpiBytes / per) });
  const sorted = (m: Map<string, WalShare>) => [...m.values()].sort((a, b) => b.bytes - a.bytes);
  return {
    bytesPerTask: Math.round(splits.reduce((s, x) => s + x.bytes, 0) / per),
    byRelation: sorted(rels).map((r) => ({ ...per1(r), kinds: sorted(kindsOf.get(r.name)!).slice(0, 6).map(per1) })),
    byKind: sorted(kinds).slice(0, 20).map(per1),
  };
}

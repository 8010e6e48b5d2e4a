import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "./generated/client.ts";
import { preparedParameter } from "./array-literal.ts";

export type Db = PrismaClient;
export * as Prisma from "./generated/client.ts";

/** A Prisma client over a pool of its own, closed with the client (test support reads the books so). */
export function createDb(url: string): Db {
  return prismaOver(new pg.Pool({ connectionString: url, max: 10 }));
}

const prismaOver = (pool: pg.Pool): Db => new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });

/**
 * The market's ways to its database, one for each kind of work: `db` (Prisma) for transactions
 * and the ORM's reads and writes; `reads` for the pages' prepared reads, on connections of their
 * own; `journal` for the journal's statements in the order decided (market/journal.ts). `shared`
 * prepares a statement on Prisma's own connections, outside any transaction (a machine's
 * registration); `pool` is those connections, whose counts /metrics reads.
 */
export class Database {
  readonly pool: pg.Pool;
  readonly db: Db;
  readonly reads: Prepared;
  readonly shared: Prepared;
  readonly journal: Sequence;

  /**
   * `idleInTransactionMs`: how long PostgreSQL lets one of Prisma's connections sit inside a
   * transaction waiting for this process (none of the market's transactions waits anywhere near
   * that). A manager frozen mid-transaction (stopped, its host suspended) would otherwise keep
   * its row and advisory locks, on accounts every manager pays through, until it woke: its
   * session is ended instead, its transaction undone, and the others go on. The manager passes
   * its takeover timeout, so the locks are free by the time another manager takes its place.
   */
  constructor(
    readonly url: string,
    { idleInTransactionMs }: { idleInTransactionMs?: number } = {},
  ) {
    this.pool = new pg.Pool({ connectionString: url, max: 10, ...(idleInTransactionMs ? { idle_in_transaction_session_timeout: idleInTransactionMs } : {}) });
    this.db = prismaOver(this.pool);
    this.shared = new Prepared(this.pool);
    // An idle connection that breaks (the database restarted) leaves the pool, which opens a new
    // one for the next statement; unheard, its error would end the process.
    const reader = new pg.Pool({ connectionString: url, max: READER_CONNECTIONS, options: `${KEY_LOOKUPS_ONLY} ${GENERIC_PLANS}` });
    reader.on("error", () => {});
    this.reads = new Prepared(reader);
    this.journal = new Sequence(url);
  }

  /** Closes every connection: Prisma's (with its pool), the readers', the journal's. */
  async close() {
    await this.db.$disconnect();
    await this.reads.end();
    await this.journal.end();
  }
}

/** Statements prepared once per connection of `pool` under their name. */
export class Prepared {
  constructor(private readonly pool: pg.Pool) {}

  /** The rows of the statement named `name`. */
  async rows<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    return (await this.pool.query({ name, text, values })).rows as T[];
  }

  async end() {
    await this.pool.end().catch(() => {});
  }
}

/**
 * Every statement on the journal's and the readers' connections finds its rows by key (tasks,
 * leases, jobs and accounts by id, a job's rows by job, an account's postings by account): a
 * sequential scan is never the plan wanted. A prepared statement keeps the generic plan it made
 * early, when the tables were small, and one such plan scanned every task of the market for each
 * group, and the job page's, on the shared pool, did the same for every poll: most of PostgreSQL's
 * time under load went there (`--statements` of the benches shows it). Discouraging sequential scans keeps the index whatever the
 * plan's age. Prisma's own queries (the shared pool) are planned afresh each time and keep them.
 */
const KEY_LOOKUPS_ONLY = "-c enable_seqscan=off";

/**
 * The pages' reads keep one plan per statement and connection. Left to choose, PostgreSQL planned
 * the job page afresh at every poll (a custom plan for the job's id) and the plan it made ran no
 * faster than the generic one, planning included (bench:load --statements, alternating pairs). Each statement finds its
 * rows by key (KEY_LOOKUPS_ONLY), so one plan serves every job and account, and PostgreSQL makes
 * it again when autovacuum's statistics of its tables change. The journal's statements keep the
 * choice: its report statement ran slower on the generic plan, whose arrays it assumes hold ten.
 */
const GENERIC_PLANS = "-c plan_cache_mode=force_generic_plan";

/** Connections for the pages' prepared reads (Database.reads): a poll holds one briefly. */
const READER_CONNECTIONS = 4;

/**
 * The connection the journal's entries in order run on (market/journal.ts), in pipeline mode: a
 * statement is sent without waiting for the answer to the one before, and PostgreSQL runs them
 * one after the other in the order sent, each its own transaction. A connection that breaks is
 * let go (the statements on it fail) and the next statement opens a new one.
 */
export class Sequence {
  private pool: pg.Pool;
  private client: Promise<pg.PoolClient> | null = null;

  constructor(url: string) {
    this.pool = new pg.Pool({ connectionString: url, max: 1, options: KEY_LOOKUPS_ONLY, pipeline: true });
    this.pool.on("error", () => {});
  }

  /** The rows of a statement prepared once per connection under `name`, sent after every statement before it. */
  async rows<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    const client = await (this.client ??= this.connect());
    return (await client.query({ name, text, values: values.map(preparedParameter) })).rows as T[];
  }

  private connect(): Promise<pg.PoolClient> {
    const connecting = this.pool.connect().then((client) => {
      const drop = (error?: Error) => {
        if (this.client === connecting) this.client = null;
        letGo(client, error);
      };
      client.on("error", drop);
      client.on("end", () => drop());
      return client;
    });
    connecting.catch(() => {
      if (this.client === connecting) this.client = null;
    });
    return connecting;
  }

  async end() {
    const client = this.client;
    this.client = null;
    if (client) await client.then((c) => letGo(c), () => {});
    await this.pool.end().catch(() => {});
  }
}

/** Gives a connection back to its pool to be closed, once (a second release throws). */
function letGo(client: pg.PoolClient, error?: Error) {
  const held = client as pg.PoolClient & { letGo?: boolean };
  if (held.letGo) return;
  held.letGo = true;
  client.release(error ?? true);
}

/** Bytes as Prisma's Bytes fields take them (a plain ArrayBuffer-backed view). */
export const toBytes = (b: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(b);

/** A value stored in a Json column: plain JSON, nothing else. */
export const toJson = (v: unknown) => JSON.parse(JSON.stringify(v)) as import("./generated/internal/prismaNamespace.ts").InputJsonValue;

import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "./generated/client.ts";

export type Db = PrismaClient;
export * as Prisma from "./generated/client.ts";

const pools = new WeakMap<Db, pg.Pool>();

export function createDb(url: string): Db {
  // The pool is made here so its connection counts can be read for /metrics (poolOf).
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const db = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  pools.set(db, pool);
  return db;
}

/** The connection pool behind a client made by createDb. */
export const poolOf = (db: Db): pg.Pool | null => pools.get(db) ?? null;

/** Bytes as Prisma's Bytes fields take them (a plain ArrayBuffer-backed view). */
export const toBytes = (b: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(b);

/** A value stored in a Json column: plain JSON, nothing else. */
export const toJson = (v: unknown) => JSON.parse(JSON.stringify(v)) as import("./generated/internal/prismaNamespace.ts").InputJsonValue;

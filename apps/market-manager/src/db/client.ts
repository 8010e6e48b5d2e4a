import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client.ts";

export type Db = PrismaClient;
export * as Prisma from "./generated/client.ts";

export function createDb(url: string): Db {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 10 }) });
}

/** Bytes as Prisma's Bytes fields take them (a plain ArrayBuffer-backed view). */
export const toBytes = (b: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(b);

/** A value stored in a Json column: plain JSON, nothing else. */
export const toJson = (v: unknown) => JSON.parse(JSON.stringify(v)) as import("./generated/internal/prismaNamespace.ts").InputJsonValue;

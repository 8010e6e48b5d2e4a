import { LRUCache } from "lru-cache";
import type { Db } from "../db/client.ts";
import { refuse } from "../api/errors.ts";

/** Base64 text of programs kept for workers' fetches, at most: five of the largest programs a market takes by default (8 MB each, 10.7 MB as text). */
export const MODULE_DOWNLOAD_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * The stored programs as workers fetch them (`worker.module`: the bytes in base64), by hash, the
 * most recently fetched kept in memory up to a budget of text. Every machine that gets a task of a
 * new program asks for the program once, so a job spread over a thousand machines is a thousand
 * fetches of the same bytes within seconds. Each fetch read them from PostgreSQL, where a bytea
 * column travels as hex text that the driver decodes into a string and then into bytes, and
 * encoded them to base64 again, all on the market's thread, most of it the driver's decoding of
 * the hex. A program is stored once under
 * its hash and never changes or leaves, so what is kept is always right; fetches of a program not
 * kept share one read. A hash not stored is refused and not remembered: a program stored later is
 * served at its next fetch.
 */
export class ModuleDownloads {
  private cache: LRUCache<string, string>;

  constructor(db: Db, maxBytes = MODULE_DOWNLOAD_CACHE_BYTES) {
    this.cache = new LRUCache<string, string>({
      maxSize: maxBytes,
      sizeCalculation: (text) => Math.max(1, text.length),
      fetchMethod: async (hash) => {
        const row = await db.module.findUnique({ where: { hash }, select: { bytes: true } });
        if (!row) throw refuse.notFound("module");
        return Buffer.from(row.bytes).toString("base64");
      },
    });
  }

  /** The program's bytes in base64, or the refusal a hash not stored gets. */
  async base64(hash: string): Promise<string> {
    const text = await this.cache.fetch(hash);
    if (text === undefined) throw refuse.notFound("module");
    return text;
  }
}

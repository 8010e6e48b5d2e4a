import { randomFillSync, randomUUID } from "node:crypto";
import { v7 } from "uuid";

/**
 * Ids of the rows the market writes by the thousand (jobs, tasks, leases, results, ledger
 * entries, postings, accounts, machines, the decision log's rows): time-ordered UUIDs (version 7: 48 bits of milliseconds,
 * then a counter that starts at random each millisecond, then random bits). An id says when its
 * row was made, which every page shows anyway, and no id is a secret: every read of a row checks
 * its caller (a job's owner, a machine's credentials).
 *
 * Every id is a key of a B-tree, and a task writes about sixteen index entries (its row, its
 * lease, its result, its payment's entry and two postings, each with its keys). Random ids put
 * each entry on a random leaf of its index; ids that grow with time put them on the last leaf,
 * which PostgreSQL keeps at hand (its B-tree's rightmost-leaf fast path) instead of searching the
 * tree for each, and keep the pages being written few and hot. In `bench:dispatch --tasks 20000`
 * PostgreSQL's CPU per task fell by about a quarter (docs/SCALING.md).
 *
 * The layout is the `uuid` package's; the randomness is drawn from a pool filled 256 ids at a time
 * and the counter is kept here as the package keeps its own (a fresh random start each
 * millisecond, plus one per id within it), because its default draws 16 bytes through web crypto
 * for every id: about 4.7 µs an id against 0.3 here, on the market's thread.
 */
const POOL_IDS = 256;
const pool = new Uint8Array(16 * POOL_IDS);
let used = pool.length;
let msecs = -Infinity;
let seq = 0;

function timeOrdered(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const random = pool.subarray(used, used + 16);
  used += 16;
  const now = Date.now();
  if (now > msecs) {
    // 31 bits, the top one clear, so a millisecond's ids can count up a long way before carrying.
    seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
    msecs = now;
  } else {
    seq = (seq + 1) | 0;
    // Carried into the next millisecond, so ids keep growing even past the counter's end.
    if (seq === 0) msecs++;
  }
  return v7({ msecs, seq, random });
}

/** A new row's id. `MARKET_ROW_IDS=random` gives version 4 ids instead, only to measure the difference. */
export const rowId: () => string = process.env.MARKET_ROW_IDS === "random" ? randomUUID : timeOrdered;

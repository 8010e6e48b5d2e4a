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
 * tree for each, and keep the pages being written few and hot, which PostgreSQL's CPU per task
 * in `bench:dispatch` shows.
 *
 * The layout is the `uuid` package's; the randomness is drawn from a pool filled 256 ids at a time
 * and the counter is kept here as the package keeps its own (a fresh random start each
 * millisecond, plus one per id within it), because its default draws 16 bytes through web crypto
 * for every id, many times the cost of this, on the market's thread.
 */
const POOL_IDS = 256;
const pool = new Uint8Array(16 * POOL_IDS);
let used = pool.length;
let msecs = -Infinity;
let seq = 0;
/** One id's random bytes, and the options and bytes `v7` is given: reused for every id. */
const random = new Uint8Array(16);
const options = { msecs: 0, seq: 0, random };
const bytes = new Uint8Array(16);

function timeOrdered(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  for (let i = 0; i < 16; i++) random[i] = pool[used + i]!;
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
  options.msecs = msecs;
  options.seq = seq;
  return uuidText(v7(options, bytes));
}

const HEX = Buffer.from("0123456789abcdef", "latin1");
/** An id's text is written here, its dashes in place, and read out as one string. */
const text = Buffer.from("00000000-0000-0000-0000-000000000000", "latin1");

/**
 * A UUID's 16 bytes as its text, lower-case with its four dashes, as the `uuid` package's
 * `stringify` writes it. That one joins 16 pieces of two characters and lower-cases the
 * result: 17 strings of garbage an id, and the market makes about five ids a task.
 * This writes the characters into one buffer and makes the one string.
 */
export function uuidText(b: Uint8Array): string {
  let at = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) at++;
    const byte = b[i]!;
    text[at++] = HEX[byte >> 4]!;
    text[at++] = HEX[byte & 15]!;
  }
  return text.toString("latin1", 0, 36);
}

/** A new row's id. `MARKET_ROW_IDS=random` gives version 4 ids instead, only to measure the difference. */
export const rowId: () => string = process.env.MARKET_ROW_IDS === "random" ? randomUUID : timeOrdered;

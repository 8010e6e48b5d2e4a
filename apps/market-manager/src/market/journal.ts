/**
 * What the market's hot steps write, in the order they decided it. A step that takes reports,
 * leases or a new job's admission decides on the market's lock from memory alone and hands its one
 * statement here; the lock is free again at once, and the next step is decided while PostgreSQL
 * runs this one. Entries run one at a time, in the order they were added (except that an
 * admission yields to the reports and leases added while it waits: YIELD_PASSES), on one
 * connection of the market's own (db/client.ts Database.journal): an entry can rely on every entry sent
 * before it having run, and kill -9 at any moment leaves a prefix of them, in the order sent,
 * committed. An entry's `applied` moves memory once its statement committed, before that of any
 * entry sent after it, and says so to whoever waits (a worker is answered only then); `failed`
 * undoes what its step moved ahead and chooses what to do instead.
 *
 * Up to MAX_IN_SEQUENCE of them are sent at once on that connection, each without waiting for the
 * one before to be answered: PostgreSQL runs them in turn all the same, and one that fails fails
 * alone (each is its own transaction). A statement is decided before the ones ahead of it are
 * applied either way (the next group is decided while one runs; the marks of what moves ahead,
 * live.ts, keep it from taking what they take), so sending it early changes only when PostgreSQL
 * has it: sent once the one ahead was answered, each waited for a turn of the event loop between
 * the two, PostgreSQL idle meanwhile, and dispatch was slower for it (bench:dispatch, alternating).
 *
 * Every other step of the market (a departure, a cancellation, the sweeper's) waits for the
 * journal to be idle before it runs (Market.serial), so it sees memory with every write applied,
 * and no entry is applied while it runs.
 *
 * A new job's admission is an entry like any other, but one that yields: its statement runs on the
 * one connection, pipelined with the reports and leases around it, and the reports and leases
 * decided while it waits to be sent go ahead of it (YIELD_PASSES). Admissions ran side by side on
 * connections of their own, every other entry waiting for them to be applied and they for every
 * entry before them: under a mixed load the reports' groups waited for that barrier, and
 * side-by-side admissions of one consumer waited for each other's lock on the consumer's account
 * row (bench:load shows both). A big job's admission holds the entries behind it in order; many
 * submitted at once went no slower so than side by side (bench:dispatch, alternating).
 */
export interface JournalEntry<T> {
  /** What the entry writes ("reports", "leases", "admission", "moves"): its label in the journal's metrics. */
  kind: string;
  /** The entry's statement. */
  write(): Promise<T>;
  /** Its statement committed: memory follows, callers are answered. May add entries. */
  applied(result: T): void;
  /** Its statement failed and nothing of it happened. May add entries or steps. */
  failed(error: unknown): void;
  /**
   * The entry may be sent after entries added later that do not yield (YIELD_PASSES of them at
   * most): a new job's admission, which nothing decided after it relies on until it is applied
   * (its job and tasks join memory only then), so the reports and leases decided meanwhile go
   * first. See "Reports before admissions" below.
   */
  yields?: boolean;
}

/**
 * Entries in order sent at once, at most, on the one connection that runs them in turn
 * (db/client.ts Database.journal): a group's reports and its leases, and the next group's reports
 * behind them.
 */
export const MAX_IN_SEQUENCE = 3;

/**
 * Reports before admissions. An entry that yields waits while entries that do not yield, added
 * after it, are sent first, at most this many for the one at the head of the yielding entries; a
 * group of reports is decided once no entry that does not yield waits and at most one is being
 * written, whatever admissions wait. The order matters to nothing but time: a report or lease is
 * of a job already applied, never of one whose admission waits, and what a report group credits
 * (a consumer's refund at a settlement, the market's share) can only help an admission's
 * conditional debit that runs after it. Kill -9 still leaves a prefix of the order sent, and a
 * submission is answered only once its admission is applied. In the closed mixed load (1,000
 * machines, 50 consumers), admissions were the journal's most frequent entries, one statement a
 * job, and the reports' groups waited behind them (docs/SCALING.md).
 */
export const YIELD_PASSES = 4;

type Outcome = { ok: true; result: unknown } | { ok: false; error: unknown };

/**
 * Told, for each entry, how long it waited to be sent (`wait`: entries before it filled the
 * connection) and how long its statement took from being sent to its answer (`write`: the
 * statements ahead of it on the connection, its own, its commit, and the answer's way back).
 * ops.ts counts them for /metrics (cyclemarket_journal_seconds).
 */
export type JournalObserver = (kind: string, stage: "wait" | "write", seconds: number) => void;

interface Added {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  entry: JournalEntry<any>;
  /** performance.now() when added. */
  at: number;
}

interface Sent {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  entry: JournalEntry<any>;
  outcome: Outcome | null;
}

export class Journal {
  /** Entries added and not yet sent that do not yield, in the order added. */
  private entries: Added[] = [];
  /** Entries added and not yet sent that yield (JournalEntry.yields), in the order added. */
  private yielding: Added[] = [];
  /** How many entries were sent ahead of the first yielding entry while it waited (YIELD_PASSES). */
  private passes = 0;
  /** Entries sent and not yet applied, oldest first. */
  private sent: Sent[] = [];
  private idleWaiters: (() => void)[] = [];
  private roomWaiters: (() => void)[] = [];
  private applying = false;
  /** Told each entry's times (JournalObserver); none until ops.ts sets it. */
  observe: JournalObserver | null = null;

  constructor(private log: (line: string) => void) {}

  add<T>(entry: JournalEntry<T>): void {
    (entry.yields ? this.yielding : this.entries).push({ entry, at: performance.now() });
    // An entry added while earlier ones are applied starts once all of them are.
    if (!this.applying) this.send();
  }

  /** Entries added and not yet started (those being written are not counted). */
  get waiting(): number {
    return this.entries.length + this.yielding.length;
  }

  /** Whether an entry is being written or waits. */
  get busy(): boolean {
    return this.sent.length > 0 || this.waiting > 0;
  }

  /** Resolves once every entry added so far (and any their `applied` or `failed` added) ran and was applied. */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Calls `ready` once no entry waits to start and at most one is being written, entries that
   * yield not counted: the moment to decide the next group, so that what arrives while statements
   * run is written by the next one, together, and is sent before the connection runs dry.
   */
  whenRoom(ready: () => void): void {
    if (this.room()) ready();
    else this.roomWaiters.push(ready);
  }

  private room() {
    if (this.entries.length) return false;
    let writing = 0;
    for (const s of this.sent) if (!s.entry.yields) writing++;
    return writing <= 1;
  }

  /** The next entry to send: one that does not yield, unless the first yielding one was passed YIELD_PASSES times. */
  private next(): Added {
    if (this.yielding.length && (!this.entries.length || this.passes >= YIELD_PASSES)) {
      this.passes = 0;
      return this.yielding.shift()!;
    }
    // Here an entry that does not yield waits: it passes the first yielding one, if any.
    if (this.yielding.length) this.passes++;
    return this.entries.shift()!;
  }

  /** Starts every entry that may start now. */
  private send() {
    while (this.waiting && this.sent.length < MAX_IN_SEQUENCE) {
      const { entry, at } = this.next();
      const sent: Sent = { entry, outcome: null };
      this.sent.push(sent);
      const sentAt = performance.now();
      this.observe?.(entry.kind, "wait", (sentAt - at) / 1000);
      void write(entry).then((outcome) => {
        this.observe?.(entry.kind, "write", (performance.now() - sentAt) / 1000);
        sent.outcome = outcome;
        this.apply();
      });
    }
    if (this.room() && this.roomWaiters.length) for (const ready of this.roomWaiters.splice(0)) ready();
  }

  /** Applies the written entries in the order they were sent, then starts what may start. */
  private apply() {
    this.applying = true;
    while (this.sent[0]?.outcome) {
      const { entry, outcome: w } = this.sent.shift()!;
      try {
        if (w!.ok) entry.applied(w!.result);
        else entry.failed(w!.error);
      } catch (e) {
        // Memory could not follow a write (a defect): said loudly, and the journal goes on.
        this.log(`a journal entry's ${w!.ok ? "apply" : "undo"} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      }
    }
    this.applying = false;
    this.send();
    if (!this.busy) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function write(entry: JournalEntry<any>): Promise<Outcome> {
  try {
    return entry.write().then(
      (result): Outcome => ({ ok: true, result }),
      (error: unknown): Outcome => ({ ok: false, error }),
    );
  } catch (error) {
    return Promise.resolve({ ok: false, error });
  }
}

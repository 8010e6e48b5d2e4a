/**
 * What the market's hot steps write, in the order they decided it. A step that takes reports,
 * leases or a new job's admission decides on the market's lock from memory alone and hands its one
 * statement here; the lock is free again at once, and the next step is decided while PostgreSQL
 * runs this one. Entries run one at a time, in the order they were added, on the market's own
 * connections (db/client.ts writerOf): a later entry can rely on every earlier one having run, and
 * kill -9 at any moment leaves a prefix of them committed. An entry's `applied` moves memory once
 * its statement committed, before any later entry's, and says so to whoever waits (a worker is
 * answered only then); `failed` undoes what its step moved ahead and chooses what to do instead.
 *
 * Every other step of the market (a departure, a cancellation, the sweeper's) waits for the
 * journal to be idle before it runs (Market.serial), so it sees memory with every write applied,
 * and no entry is applied while it runs.
 *
 * Entries that say they are `independent` (a new job's admission) run side by side with the
 * independent entries just before them, up to MAX_SIDE_BY_SIDE, and are applied in order once all
 * of them are written: each statement waits for a turn of the event loop to hear back, and under
 * load a turn is 10 to 30 ms, so one at a time the journal wrote at most a few dozen admissions a
 * second and the reports queued behind them (bench:load, 1,000 machines and 50 consumers: the
 * journal busy the whole time, a report waiting 700 ms). Such an entry's kill -9 may then leave a
 * later one of them committed and an earlier one not; neither was answered.
 */
export interface JournalEntry<T> {
  /** The entry's statement. */
  write(): Promise<T>;
  /** Its statement committed: memory follows, callers are answered. May add entries. */
  applied(result: T): void;
  /** Its statement failed and nothing of it happened. May add entries or steps. */
  failed(error: unknown): void;
  /**
   * Its statement needs nothing an earlier independent entry writes and writes nothing such an
   * entry reads, bar rows both only change under a condition the database checks again once the
   * other committed (a consumer's balance, debited only down to its floor): it may run beside them.
   */
  independent?: boolean;
}

/** Independent entries written at once, at most (db/client.ts has as many connections for them). */
export const MAX_SIDE_BY_SIDE = 4;

export class Journal {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private entries: JournalEntry<any>[] = [];
  private running = false;
  private idleWaiters: (() => void)[] = [];
  private roomWaiters: (() => void)[] = [];

  constructor(private log: (line: string) => void) {}

  add<T>(entry: JournalEntry<T>): void {
    this.entries.push(entry);
    if (!this.running) void this.run();
  }

  /** Entries added and not yet started (the one running is not counted). */
  get waiting(): number {
    return this.entries.length;
  }

  /** Whether an entry runs or waits. */
  get busy(): boolean {
    return this.running || this.entries.length > 0;
  }

  /** Resolves once every entry added so far (and any their `applied` or `failed` added) ran and was applied. */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Calls `ready` once no entry waits to start (one runs, or one batch side by side): the moment to decide the next
   * group, so that what arrives while a statement runs is written by the next one, together.
   */
  whenRoom(ready: () => void): void {
    if (this.entries.length === 0) ready();
    else this.roomWaiters.push(ready);
  }

  private async run() {
    this.running = true;
    while (this.entries.length) {
      const batch = [this.entries.shift()!];
      while (batch[0]!.independent && this.entries[0]?.independent && batch.length < MAX_SIDE_BY_SIDE) batch.push(this.entries.shift()!);
      if (this.entries.length === 0 && this.roomWaiters.length) for (const ready of this.roomWaiters.splice(0)) ready();
      const written = await Promise.all(
        batch.map((entry) => {
          try {
            return entry.write().then((result) => ({ ok: true, result }), (error: unknown) => ({ ok: false, error }));
          } catch (error) {
            return { ok: false, error };
          }
        }),
      );
      batch.forEach((entry, i) => {
        const w = written[i]! as { ok: boolean; result?: unknown; error?: unknown };
        try {
          if (w.ok) entry.applied(w.result);
          else entry.failed(w.error);
        } catch (e) {
          // Memory could not follow a write (a defect): said loudly, and the journal goes on.
          this.log(`a journal entry's ${w.ok ? "apply" : "undo"} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
        }
      });
    }
    this.running = false;
    for (const ready of this.roomWaiters.splice(0)) ready();
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}

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
 */
export interface JournalEntry<T> {
  /** The entry's statement. */
  write(): Promise<T>;
  /** Its statement committed: memory follows, callers are answered. May add entries. */
  applied(result: T): void;
  /** Its statement failed and nothing of it happened. May add entries or steps. */
  failed(error: unknown): void;
}

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
   * Calls `ready` once no entry waits to start (at most one runs): the moment to decide the next
   * group, so that what arrives while a statement runs is written by the next one, together.
   */
  whenRoom(ready: () => void): void {
    if (this.entries.length === 0) ready();
    else this.roomWaiters.push(ready);
  }

  private async run() {
    this.running = true;
    while (this.entries.length) {
      const entry = this.entries.shift()!;
      if (this.entries.length === 0 && this.roomWaiters.length) for (const ready of this.roomWaiters.splice(0)) ready();
      let ok = false;
      let result: unknown;
      let error: unknown;
      try {
        result = await entry.write();
        ok = true;
      } catch (e) {
        error = e;
      }
      try {
        if (ok) entry.applied(result);
        else entry.failed(error);
      } catch (e) {
        // Memory could not follow a write (a defect): said loudly, and the journal goes on.
        this.log(`a journal entry's ${ok ? "apply" : "undo"} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      }
    }
    this.running = false;
    for (const ready of this.roomWaiters.splice(0)) ready();
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}

import { LRUCache } from "lru-cache";

/** Entries kept at most, the credentials heard from last; one let go is asked of the database again. */
export const MAX_ENTRIES = 100_000;

/**
 * Answers about credentials (an API token's holder) asked of the database once and then given
 * from memory: an entry past its time is asked for again once, however many calls carry the same
 * credential meanwhile (a fleet of machines shares one token), and those calls are answered from the entry until the new answer comes.
 * Unknown credentials are remembered too, so a flood of bad ones costs one query each per TTL.
 * forget() drops entries at once; an answer read before it is not kept.
 */
export class HeldAnswers<T> {
  private held = new LRUCache<string, { holder: T | null; until: number }>({ max: MAX_ENTRIES });
  private asking = new Map<string, Promise<T | null>>();
  private forgotten = 0;

  constructor(
    private ttlMs: number,
    private now: () => number,
  ) {}

  lookup(key: string, ask: () => Promise<T | null>): Promise<T | null> {
    const entry = this.held.get(key);
    if (!entry) return this.ask(key, ask);
    if (entry.until <= this.now()) void this.ask(key, ask).catch(() => {});
    return Promise.resolve(entry.holder);
  }

  private ask(key: string, ask: () => Promise<T | null>): Promise<T | null> {
    let pending = this.asking.get(key);
    if (!pending) {
      const generation = this.forgotten;
      pending = ask()
        .then((holder) => {
          if (generation === this.forgotten) {
            this.held.set(key, { holder, until: this.now() + this.ttlMs });
          }
          return holder;
        })
        .finally(() => {
          if (this.asking.get(key) === pending) this.asking.delete(key);
        });
      this.asking.set(key, pending);
    }
    return pending;
  }

  /** Forgets the entries whose holder `match` accepts, or every entry. */
  forget(match?: (holder: T) => boolean): void {
    this.forgotten += 1;
    this.asking.clear();
    if (!match) return this.held.clear();
    const matched = [...this.held.entries()].filter(([, { holder }]) => holder !== null && match(holder));
    for (const [key] of matched) this.held.delete(key);
  }
}

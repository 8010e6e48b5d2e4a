// Signed-in callers by their session cookie, for a few seconds. Reading a browser session costs the
// auth library's signed-cookie check and its session query, then the user's row: more than a small
// submission's admission. A caller seen a moment ago is answered from memory instead, as API tokens
// are (tokens.ts).
//
// What could make a cached caller wrong is forgotten at once in this process: every request to
// the auth routes but reading the session (sign-out, revocations, a password change, email
// verification) forgets every entry, and a change of roles forgets the user's. What another
// process changes (a second manager, the database edited by hand) is seen within SESSION_TTL_MS.

import { LRUCache } from "lru-cache";

/** How long a session's caller is believed without asking again. */
export const SESSION_TTL_MS = 10_000;
/** Entries held at most, the sessions seen last; one let go costs a query, once. */
export const MAX_ENTRIES = 100_000;

export class SessionCache<C extends { id: string }> {
  private held = new LRUCache<string, { caller: C; until: number }>({ max: MAX_ENTRIES });
  /** Counts forgets: an answer read before one is not kept. */
  private generation = 0;

  constructor(private now: () => number = Date.now) {}

  /** The caller behind this cookie header, if it was read within SESSION_TTL_MS and nothing was forgotten since. */
  get(cookie: string): C | null {
    const entry = this.held.get(cookie);
    if (!entry) return null;
    if (entry.until > this.now()) return entry.caller;
    this.held.delete(cookie);
    return null;
  }

  /** Where a lookup starts: `keep` stores its answer only if nothing was forgotten meanwhile. */
  begin(): number {
    return this.generation;
  }

  keep(started: number, cookie: string, caller: C, sessionExpiresAt: number) {
    if (started !== this.generation) return;
    this.held.set(cookie, { caller, until: Math.min(this.now() + SESSION_TTL_MS, sessionExpiresAt) });
  }

  /** Forgets the user's sessions, or every session. */
  forget(userId?: string) {
    this.generation += 1;
    if (userId === undefined) return void this.held.clear();
    const theirs = [...this.held.entries()].filter(([, { caller }]) => caller.id === userId);
    for (const [cookie] of theirs) this.held.delete(cookie);
  }
}

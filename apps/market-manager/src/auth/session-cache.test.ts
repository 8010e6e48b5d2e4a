import { describe, expect, it } from "vitest";
import { MAX_ENTRIES, SESSION_TTL_MS, SessionCache } from "./session-cache.ts";

describe("SessionCache", () => {
  const alice = { id: "u1", name: "alice" };
  const bob = { id: "u2", name: "bob" };

  it("answers a session for SESSION_TTL_MS at most, and never past the session's own expiry", () => {
    let now = 1_000;
    const cache = new SessionCache<typeof alice>(() => now);
    cache.keep(cache.begin(), "cookie-a", alice, now + 60 * SESSION_TTL_MS);
    cache.keep(cache.begin(), "cookie-b", bob, now + 500);
    expect(cache.get("cookie-a")).toBe(alice);
    expect(cache.get("cookie-b")).toBe(bob);
    now += 501;
    expect(cache.get("cookie-b")).toBeNull();
    expect(cache.get("cookie-a")).toBe(alice);
    now += SESSION_TTL_MS;
    expect(cache.get("cookie-a")).toBeNull();
    expect(cache.get("unknown")).toBeNull();
  });

  it("forgets one user's sessions or all, and keeps no answer read before a forget", () => {
    const cache = new SessionCache<typeof alice>();
    const far = Date.now() + 3_600_000;
    cache.keep(cache.begin(), "a", alice, far);
    cache.keep(cache.begin(), "b", bob, far);
    cache.forget("u1");
    expect(cache.get("a")).toBeNull();
    expect(cache.get("b")).toBe(bob);

    // A lookup that started before a sign-out elsewhere: its answer may be stale, so it is not kept.
    const started = cache.begin();
    cache.forget();
    expect(cache.get("b")).toBeNull();
    cache.keep(started, "a", alice, far);
    expect(cache.get("a")).toBeNull();
  });

  it("keeps the sessions seen last when full: a busy market does not lose every signed-in caller at once", () => {
    const cache = new SessionCache<typeof alice>();
    const far = Date.now() + 3_600_000;
    cache.keep(cache.begin(), "first", alice, far);
    for (let i = 1; i < MAX_ENTRIES; i++) cache.keep(cache.begin(), `c${i}`, bob, far);
    expect(cache.get("first")).toBe(alice); // seen again: the last one seen
    cache.keep(cache.begin(), "one more", bob, far);
    expect(cache.get("first")).toBe(alice);
    expect(cache.get("c1")).toBeNull(); // the one seen longest ago made room
    expect(cache.get(`c${MAX_ENTRIES - 1}`)).toBe(bob);
  });
});

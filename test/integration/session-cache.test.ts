import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PUBLIC_URL, startTestMarket, type TestMarket } from "../support/market.ts";

// A browser session's caller is answered from memory for a few seconds (auth/session-cache.ts):
// what ends or changes a session still takes effect at the next call.

let market: TestMarket;

beforeAll(async () => {
  market = await startTestMarket();
});
afterAll(async () => {
  await market?.stop();
});

/** A signed-up consumer's session cookie, and a tRPC query made with it (its HTTP status). */
async function session(email: string) {
  const res = await fetch(`${market.url}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: PUBLIC_URL },
    body: JSON.stringify({ email, password: "correct horse battery", name: "buyer" }),
  });
  expect(res.status).toBe(200);
  const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const jobs = async () => (await fetch(`${market.url}/api/trpc/jobs.list`, { headers: { cookie, origin: PUBLIC_URL } })).status;
  const roles = (roles: string[]) =>
    fetch(`${market.url}/api/trpc/account.chooseRoles`, { method: "POST", headers: { cookie, origin: PUBLIC_URL, "content-type": "application/json" }, body: JSON.stringify({ roles }) });
  return { cookie, jobs, roles };
}

describe("a signed-in session", () => {
  it("is refused at the next call once signed out, though it was just used", async () => {
    const s = await session("leaving@example.test");
    expect((await s.roles(["consumer"])).status).toBe(200);
    expect(await s.jobs()).toBe(200);
    expect(await s.jobs()).toBe(200);
    const out = await fetch(`${market.url}/api/auth/sign-out`, { method: "POST", headers: { cookie: s.cookie, origin: PUBLIC_URL } });
    expect(out.status).toBe(200);
    expect(await s.jobs()).toBe(401);
  });

  it("acts with the roles just chosen from the next call on", async () => {
    const s = await session("switching@example.test");
    expect((await s.roles(["producer"])).status).toBe(200);
    expect(await s.jobs()).toBe(403); // a consumer's call, made as a producer
    expect((await s.roles(["producer", "consumer"])).status).toBe(200);
    expect(await s.jobs()).toBe(200);
  });
});

describe("the sign-in library's call contexts", () => {
  // They are enabled only while one of its calls runs (auth/context-storage.ts): released between
  // calls, they must still keep each of many calls at once apart.
  it("keep sign-ups and session checks made at once apart, and are released once they are done", async () => {
    const { AsyncLocalStorage } = await import("node:async_hooks");
    const { authCallsRunning } = await import("../../apps/market-manager/src/auth/context-storage.ts");
    const emails = Array.from({ length: 8 }, (_, i) => `together${i}@example.test`);
    const me = async (cookie: string) => {
      const res = await fetch(`${market.url}/api/trpc/account.me`, { headers: { cookie, origin: PUBLIC_URL } });
      expect(res.status).toBe(200);
      return ((await res.json()) as { result: { data: { email: string } | null } }).result.data?.email;
    };
    const sessions = await Promise.all(emails.map((email) => session(email)));
    // Each cookie is answered as its own user, checked all at once (the session cache is cold for
    // each: these are the library's own session reads, interleaved).
    expect(await Promise.all(sessions.map((s) => me(s.cookie)))).toEqual(emails);
    expect(authCallsRunning()).toBe(0);
    const context = (globalThis as Record<symbol, { context: Record<string, unknown> }>)[Symbol.for("better-auth:global")]!.context;
    const storages = Object.values(context).filter((s): s is InstanceType<typeof AsyncLocalStorage> & { enabled: boolean } => s instanceof AsyncLocalStorage);
    expect(storages.length).toBeGreaterThan(0);
    expect(storages.map((s) => s.enabled)).toEqual(storages.map(() => false));
  });
});

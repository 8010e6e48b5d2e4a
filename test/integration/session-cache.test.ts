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

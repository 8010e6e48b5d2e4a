import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { LEAKS, postFrom, send, sessionOf } from "./http.ts";

// The auth routes: bounded bodies, bounded fields, a real password policy, and sign-in limited
// per client address by the auth library's limiter, its counters kept in PostgreSQL. Cookies are
// Secure when a trusted proxy says the request came over HTTPS, and only then.

let market: TestMarket;
const SIGNINS = 3;

beforeAll(async () => {
  market = await startTestMarket({ SIGNINS_PER_MINUTE: String(SIGNINS) });
  await market.signUp("owner@example.test", ["consumer"]);
});
afterAll(() => market?.stop());

const signUp = (body: Record<string, unknown>) => send(`${market.url}/api/auth/sign-up/email`, { json: body });
const signIn = (base: string, password: string, headers: Record<string, string>) =>
  send(`${base}/api/auth/sign-in/email`, { json: { email: "owner@example.test", password }, headers });

describe("sign-up", () => {
  it("refuses a body over the limit at once, saying the limit", async () => {
    const started = Date.now();
    const res = await signUp({ email: "big@example.test", password: "correct horse battery", name: "x".repeat(2 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(res.json.reason).toMatchObject({ code: "body-too-large", limit: "auth-body-bytes" });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await market.manager.services.db.user.count({ where: { email: "big@example.test" } })).toBe(0);
  });

  it("refuses over-long names and email addresses, naming the field and its limit", async () => {
    const name = await signUp({ email: "long@example.test", password: "correct horse battery", name: "x".repeat(1000) });
    expect(name.status).toBe(400);
    expect(name.json.message).toMatch(/name: .*at most 100/);
    const email = await signUp({ email: `${"a".repeat(10_000)}@example.test`, password: "correct horse battery", name: "a" });
    expect(email.status).toBe(400);
    expect(email.json.message).toMatch(/email: /);
    expect(email.text).not.toMatch(LEAKS);
  });

  it("holds passwords to a policy", async () => {
    for (const password of [" ".repeat(12), "aaaaaaaaaaaa", "password123", "short"]) {
      const res = await signUp({ email: "weak@example.test", password, name: "weak" });
      expect(res.status, password).toBe(400);
      expect(res.json.reason.issues[0].path).toEqual(["password"]);
    }
    expect(await market.manager.services.db.user.count({ where: { email: "weak@example.test" } })).toBe(0);
  });
});

describe("sign-in", () => {
  it("is limited per client address, says which limit and when to retry, and keeps count in PostgreSQL", async () => {
    const attacker = { "x-forwarded-for": "203.0.113.9" };
    const answers = [];
    for (let i = 0; i < SIGNINS + 2; i++) answers.push(await signIn(market.url, `guess number ${i}`, attacker));
    expect(answers.slice(0, SIGNINS).map((a) => a.status)).toEqual(Array(SIGNINS).fill(401));
    const refused = answers[SIGNINS]!;
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.json.reason).toMatchObject({ code: "limit-reached", limit: "sign-ins-per-minute", max: SIGNINS });
    // Even the right password waits: guessing is what the limit stops.
    expect((await signIn(market.url, "correct horse battery", attacker)).status).toBe(429);
    // Another address is not held up by the attacker.
    expect((await signIn(market.url, "correct horse battery", { "x-forwarded-for": "198.51.100.4" })).status).toBe(200);
    expect(await market.manager.services.db.rateLimit.count()).toBeGreaterThan(0);
  });

  it("sets Secure cookies when a trusted proxy says the request came over HTTPS", async () => {
    const plain = await signIn(market.url, "correct horse battery", { "x-forwarded-for": "198.51.100.5" });
    expect(plain.headers.getSetCookie().some((c) => /;\s*secure/i.test(c))).toBe(false);
    const tls = await signIn(market.url, "correct horse battery", { "x-forwarded-for": "198.51.100.6", "x-forwarded-proto": "https" });
    expect(tls.status).toBe(200);
    expect(tls.headers.getSetCookie().length).toBeGreaterThan(0);
    expect(tls.headers.getSetCookie().every((c) => /;\s*secure/i.test(c))).toBe(true);
  });
});

describe("a client that is not a trusted proxy", () => {
  // Not the web app's address on this host (127.0.0.1), nor one of TRUSTED_PROXIES.
  const STRANGER = "127.0.0.3";
  let direct: TestMarket;
  beforeAll(async () => {
    direct = await startTestMarket({ SIGNINS_PER_MINUTE: String(SIGNINS), TRUSTED_PROXIES: "192.0.2.1" });
    await direct.signUp("owner@example.test", ["consumer"]);
  });
  afterAll(() => direct?.stop());

  const strangerSignIn = (password: string, headers: Record<string, string>) =>
    postFrom(STRANGER, `${direct.url}/api/auth/sign-in/email`, { email: "owner@example.test", password }, headers);

  it("cannot claim HTTPS, nor dodge the limiter by naming other addresses", async () => {
    const tls = await strangerSignIn("correct horse battery", { "x-forwarded-proto": "https" });
    expect(tls.status).toBe(200);
    expect([tls.headers["set-cookie"] ?? []].flat().some((c) => /;\s*secure/i.test(c))).toBe(false);
    const statuses = [];
    for (let i = 0; i < SIGNINS + 1; i++) statuses.push((await strangerSignIn(`guess ${i}`, { "x-forwarded-for": `203.0.113.${i + 1}` })).status);
    expect(statuses).toContain(429);
  });
});

describe("a session", () => {
  // Sessions are answered from memory between calls (a job page asks every second): signing out
  // must still end the session at once, and a new role must count from the next call.
  it("is refused at the next call once signed out, and sees its new roles at once", async () => {
    const cookie = await sessionOf(market.url, "leaving@example.test");
    const me = () => send(`${market.url}/api/trpc/account.me`, { headers: { cookie } });
    expect((await me()).json.result.data).toMatchObject({ email: "leaving@example.test", roles: ["consumer", "producer"] });
    const chosen = await send(`${market.url}/api/trpc/account.chooseRoles`, { json: { roles: ["producer"] }, headers: { cookie } });
    expect(chosen.status).toBe(200);
    expect((await me()).json.result.data.roles).toEqual(["producer"]);
    // No longer a consumer: the consumer's calls are refused from the next one on.
    expect((await send(`${market.url}/api/trpc/jobs.list`, { headers: { cookie } })).status).toBe(403);
    const out = await send(`${market.url}/api/auth/sign-out`, { json: {}, headers: { cookie } });
    expect(out.status).toBe(200);
    expect((await me()).json.result.data).toBeNull();
    expect((await send(`${market.url}/api/trpc/jobs.list`, { headers: { cookie } })).status).toBe(401);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { buildWebIfStale, startWebApp } from "../../scripts/stack.ts";
import { onFreePort } from "../../apps/market-manager/src/net/free-port.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { postFrom } from "./http.ts";

// The per-address limits as an attacker meets them: a client that writes X-Forwarded-For itself,
// with a new address at each try, through the web app (as the browser reaches the market) and
// straight at the Market Manager's port. The host plays several machines by its loopback
// addresses: 127.0.0.1 is an ordinary client of the web app, 127.0.0.2 a TLS proxy listed in
// TRUSTED_PROXIES (so a header is believed from it, and the limits are shown to be per client,
// not one for everyone), 127.0.0.3 a stranger reaching the Market Manager's port.

const SIGNINS = 3;
const SIGNUPS = 3;
const PROXY = "127.0.0.2";
const STRANGER = "127.0.0.3";

let market: TestMarket;
let web: ChildProcess;
let webUrl: string;

beforeAll(async () => {
  market = await startTestMarket({
    SIGNINS_PER_MINUTE: String(SIGNINS),
    SIGNUPS_PER_ADDRESS: String(SIGNUPS),
    SIGNUPS_PER_NETWORK: "1000",
    TRUSTED_PROXIES: PROXY,
  });
  // The victim's account, made from an address no test below uses.
  const made = await postFrom("127.0.0.9", `${market.url}/api/auth/sign-up/email`, { email: "victim@example.test", password: "correct horse battery", name: "victim" });
  expect(made.status).toBe(200);
  await buildWebIfStale(() => {});
  await onFreePort(async (port) => {
    web = await startWebApp({ port, host: "127.0.0.1", env: { NEXT_TELEMETRY_DISABLED: "1", MARKET_API_URL: market.url, TRUSTED_PROXIES: PROXY }, log: () => {} });
    webUrl = `http://127.0.0.1:${port}`;
  });
}, 300_000);
afterAll(async () => {
  if (web?.pid) process.kill(-web.pid, "SIGTERM");
  await market?.stop();
});

const signIn = (base: string, password: string, forwardedFor: string, from = "127.0.0.1") =>
  postFrom(from, `${base}/api/auth/sign-in/email`, { email: "victim@example.test", password }, { "x-forwarded-for": forwardedFor });

const signUp = (base: string, n: number, forwardedFor: string, from = "127.0.0.1") =>
  postFrom(from, `${base}/api/auth/sign-up/email`, { email: `sybil-${n}-${from}@example.test`, password: "correct horse battery", name: `sybil ${n}` }, { "x-forwarded-for": forwardedFor });

describe("through the web app", () => {
  it("a client naming a new X-Forwarded-For at each password guess is still limited, and then so is the right password", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < SIGNINS + 3; i++) statuses.push((await signIn(webUrl, `guess ${i}`, `203.0.113.${i + 1}`)).status);
    expect(statuses.slice(0, SIGNINS)).toEqual(Array(SIGNINS).fill(401));
    expect(statuses.slice(SIGNINS)).toEqual([429, 429, 429]);
    const right = await signIn(webUrl, "correct horse battery", "198.51.100.77");
    expect(right.status).toBe(429);
    expect(right.json.reason).toMatchObject({ code: "limit-reached", limit: "sign-ins-per-minute", max: SIGNINS });
  });

  it("a client naming a new X-Forwarded-For at each sign-up is still limited, and no account is opened past the limit", async () => {
    const before = await market.manager.services.db.user.count();
    const statuses: number[] = [];
    for (let i = 0; i < SIGNUPS + 3; i++) statuses.push((await signUp(webUrl, i, `203.0.113.${100 + i}`)).status);
    expect(statuses.slice(0, SIGNUPS)).toEqual(Array(SIGNUPS).fill(200));
    expect(statuses.slice(SIGNUPS)).toEqual([429, 429, 429]);
    expect(await market.manager.services.db.user.count()).toBe(before + SIGNUPS);
  });

  it("believes the address a TLS proxy of TRUSTED_PROXIES names: another client signs in while the guesser is held", async () => {
    // The guesser (127.0.0.1) is held by the test above; a client behind the proxy is not.
    const behindProxy = await signIn(webUrl, "correct horse battery", "198.51.100.4", PROXY);
    expect(behindProxy.status).toBe(200);
    // And the guesser behind that proxy is still held once it has used up its own tries.
    const statuses: number[] = [];
    for (let i = 0; i < SIGNINS + 1; i++) statuses.push((await signIn(webUrl, `guess ${i}`, "198.51.100.5", PROXY)).status);
    expect(statuses.at(-1)).toBe(429);
    expect((await signIn(webUrl, "correct horse battery", "198.51.100.6", PROXY)).status).toBe(200);
  });
});

describe("at the Market Manager's own port", () => {
  it("a stranger's X-Forwarded-For is ignored: rotating it dodges neither limit", async () => {
    const signIns: number[] = [];
    for (let i = 0; i < SIGNINS + 2; i++) signIns.push((await signIn(market.url, `guess ${i}`, `203.0.113.${200 + i}`, STRANGER)).status);
    expect(signIns.slice(SIGNINS)).toEqual([429, 429]);
    const signUps: number[] = [];
    for (let i = 0; i < SIGNUPS + 1; i++) signUps.push((await signUp(market.url, i, `203.0.113.${220 + i}`, STRANGER)).status);
    expect(signUps.at(-1)).toBe(429);
  });

  it("the address a trusted proxy names is believed", async () => {
    expect((await signIn(market.url, "correct horse battery", "198.51.100.40", PROXY)).status).toBe(200);
  });
});

// A real Market Manager for integration and fault tests: a database of its own (cloned from the
// run's migrated template on the shared PostgreSQL, postgres.ts, or its own embedded server in a
// temporary folder), the real HTTP API on a free port, and typed tRPC clients that sign in
// through Better Auth or authenticate with a worker's API token, exactly like the web app and
// the Node worker do.
import { chmodSync, mkdtempSync } from "node:fs";
import { verificationLink } from "./outbox.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink, TRPCClientError } from "@trpc/client";
import { NodeEventSource } from "../../apps/worker-runtime/src/node/event-source.ts";
import { loadConfig, startMarketManager, type AppRouter } from "../../apps/market-manager/src/index.ts";
import { freePort } from "../../apps/market-manager/src/net/free-port.ts";
import type { RunningManager } from "../../apps/market-manager/src/index.ts";
import { cloneDatabase, removeDataFolder, type SharedPostgres } from "./postgres.ts";

export const PUBLIC_URL = "http://localhost:3999";
export { verificationLink };

/**
 * The settings the tests' markets run with unless a test says otherwise: the starting credits the
 * scenarios were written for, and sign-up limits that let one test host open many accounts.
 */
export const TEST_MARKET_ENV = {
  STARTING_CREDITS: "1000",
  SIGNUPS_PER_ADDRESS: "10000",
  SIGNUPS_PER_NETWORK: "10000",
  // One host plays every user: the per-address and per-user limits are tested in test/security.
  SIGNINS_PER_MINUTE: "10000",
  AUTH_REQUESTS_PER_MINUTE: "100000",
  QUOTES_PER_MINUTE: "100000",
  SUBMISSIONS_PER_MINUTE: "100000",
  // A closed market of known producers: tests not about verification run their jobs on fresh
  // accounts. The verification tests (test/security/forged-results.test.ts) open it with "0".
  TRUST_ALL_PRODUCERS: "1",
};

/** A free port below the ephemeral range, so no outgoing connection can take it before we bind it. */
export { freePort } from "../../apps/market-manager/src/net/free-port.ts";

export interface TestMarket {
  url: string;
  manager: RunningManager;
  /** Signs up a user with these roles and returns a client carrying their session cookie. */
  signUp(email: string, roles: ("producer" | "consumer")[]): Promise<ReturnType<typeof clientFor>>;
  /** Signs in an existing user (the admin printed at the first start, say). */
  signIn(email: string, password: string): Promise<ReturnType<typeof clientFor>>;
  /** The development outbox the market mails verification links to. */
  outbox: string;
  /** A client authenticated by a producer's API token, as a Node worker is. */
  tokenClient(token: string): ReturnType<typeof clientFor>;
  /** Signs up a producer and returns their client and a worker's client on an API token of theirs named `tokenName`. */
  signUpProducer(email: string, tokenName?: string): Promise<{ producer: ReturnType<typeof clientFor>; worker: ReturnType<typeof clientFor> }>;
  /**
   * Stops the Market Manager and starts it again on the same data and port (sessions and tokens
   * survive), `downMs` later: the market is down that long (an outage, past its alive stamp's period).
   */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Queries and mutations over plain HTTP; subscriptions (live.*) over server-sent events with the same headers. */
export function clientFor(url: string, headers: Record<string, string>) {
  const endpoint = `${url}/api/trpc`;
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({ url: endpoint, EventSource: NodeEventSource, eventSourceOptions: { headers } }),
        false: httpLink({ url: endpoint, headers }),
      }),
    ],
  });
}

export interface TestMarketOptions {
  /**
   * Start an embedded PostgreSQL of the market's own in its data folder, as `npm start` does,
   * for a test of that server itself (its port, its passwords, its socket). Otherwise the market
   * runs on a clone of the run's migrated template on the shared server.
   */
  ownServer?: boolean;
}

export async function startTestMarket(env: Record<string, string> = {}, options: TestMarketOptions = {}): Promise<TestMarket> {
  const ownSettings = Object.keys(env).filter((k) => k.startsWith("MARKET_PG_"));
  if (ownSettings.length && !options.ownServer) throw new Error(`${ownSettings.join(", ")} set the market's own PostgreSQL: start it with { ownServer: true }`);
  const shared = options.ownServer || env.DATABASE_URL ? null : await sharedPostgres();
  const dataDir = mkdtempSync(join(tmpdir(), "cyclemarket-test-"));
  if (!shared) chmodSync(dataDir, 0o755); // PostgreSQL runs as its own user when we are root
  const database = shared ? await cloneDatabase(shared) : null;
  const removeData = async () => {
    await database?.drop();
    removeDataFolder(dataDir);
  };
  const cfg = loadConfig({
    MARKET_DATA_DIR: dataDir,
    ...(database ? { DATABASE_URL: database.url } : { MARKET_PG_PORT: String(await freePort()) }),
    MARKET_PORT: "0",
    PUBLIC_URL,
    LOG_LEVEL: "silent",
    ...TEST_MARKET_ENV,
    ...env,
  });
  // MARKET_LOG=1 shows the market's log (and the stacks of its 500s) while a test runs.
  const log = process.env.MARKET_LOG ? (line: string) => console.log(`[market] ${line}`) : () => {};
  // A market that does not start (a taken port, a bad setting) leaves no database or folder behind.
  let manager = await startMarketManager(cfg, log).catch(async (error: unknown) => {
    await removeData();
    throw error;
  });
  const url = `http://127.0.0.1:${manager.port}`;
  const outbox = join(dataDir, "outbox.jsonl");
  return {
    url,
    get manager() {
      return manager;
    },
    async restart(downMs = 0) {
      await manager.stop();
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      // The stop leaves the migration runner's idle session, which holds its lock on the
      // database until it times out; stopping an own server ended it, as this does on the shared one.
      await database?.disconnect();
      manager = await startMarketManager({ ...cfg, MARKET_PORT: manager.port }, log);
    },
    outbox,
    signUp: (email, roles) => signUp(url, email, roles, outbox),
    signIn: (email, password) => signIn(url, email, password),
    tokenClient: (token) => clientFor(url, { authorization: `Bearer ${token}` }),
    async signUpProducer(email, tokenName = "rack") {
      const producer = await signUp(url, email, ["producer"], outbox);
      const { token } = await producer.account.tokens.create.mutate({ name: tokenName });
      return { producer, worker: clientFor(url, { authorization: `Bearer ${token}` }) };
    },
    async stop() {
      await manager.stop();
      await removeData();
    },
  };
}

/** The run's shared server, when the test's project started one (vitest.config.ts). */
async function sharedPostgres(): Promise<SharedPostgres | null> {
  const { inject } = await import("vitest");
  return inject("sharedPostgres") ?? null;
}

/**
 * A user signed up through Better Auth with these roles; the client carries their session. With
 * the market's outbox file, the user first follows the verification link the market mailed them,
 * as a person would, so a consumer gets their starting credits.
 */
export async function signUp(url: string, email: string, roles: ("producer" | "consumer")[], outbox?: string) {
  return clientFor(url, await signUpSession(url, email, roles, outbox));
}

/** Signs a user up as `signUp` does and returns the headers that carry their session (cookie and origin). */
export async function signUpSession(url: string, email: string, roles: ("producer" | "consumer")[], outbox?: string): Promise<Record<string, string>> {
  const res = await fetch(`${url}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: PUBLIC_URL },
    body: JSON.stringify({ email, password: "correct horse battery", name: email.split("@")[0] }),
  });
  if (!res.ok) throw new Error(`sign-up failed: ${res.status} ${await res.text()}`);
  const headers = { cookie: sessionCookie(res), origin: PUBLIC_URL };
  await clientFor(url, headers).account.chooseRoles.mutate({ roles });
  if (outbox) await verifyEmail(url, outbox, email);
  return headers;
}

/** Follows the verification link, sent to the market at `url` whatever public address it names. */
export async function verifyEmail(url: string, outbox: string, email: string): Promise<void> {
  const link = new URL(verificationLink(outbox, email));
  const res = await fetch(`${url}${link.pathname}${link.search}`, { redirect: "manual", headers: { origin: PUBLIC_URL } });
  if (res.status >= 400) throw new Error(`verification failed: ${res.status} ${await res.text()}`);
}

/** Signs in through Better Auth (the admin the first start made, say); the client carries the session. */
export async function signIn(url: string, email: string, password: string) {
  const res = await fetch(`${url}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: PUBLIC_URL },
    body: JSON.stringify({ email, password }),
  });
  if (!res.ok) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  return clientFor(url, { cookie: sessionCookie(res), origin: PUBLIC_URL });
}

const sessionCookie = (res: Response) => res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");

/** Refusals are part of the game: a participant may be told no. Anything else is a failure. */
export async function allowRefusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof TRPCClientError)) throw e;
    const code = (e.data as { code?: string } | undefined)?.code;
    if (code === "INTERNAL_SERVER_ERROR") throw e;
  }
}

/** The refusal reason the API attached to an error, for assertions. */
export async function refusal(promise: Promise<unknown>): Promise<{ code: string; [k: string]: unknown }> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof TRPCClientError) {
      const reason = (e.data as { reason?: { code: string } } | undefined)?.reason;
      // A schema's refusal (invalid-input) lists its issues; the message says them in words.
      if (reason) return { message: e.message, ...reason };
      return { code: `trpc:${(e.data as { code?: string } | undefined)?.code ?? "unknown"}`, message: e.message };
    }
    throw e;
  }
  throw new Error("expected the call to be refused, but it succeeded");
}

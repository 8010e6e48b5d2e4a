import { initTRPC, TRPCError } from "@trpc/server";
import type { IncomingHttpHeaders } from "node:http";
import { fromNodeHeaders } from "better-auth/node";
import type { Role, TokenScope } from "../db/generated/enums.ts";
import type { Services } from "../services.ts";
import { Refusal, refuse } from "./errors.ts";
import { publicError } from "./public-error.ts";
import { opsOf } from "../ops/ops.ts";
import type { HeldBody } from "../http/held-body.ts";

export interface Caller {
  id: string;
  email: string;
  name: string;
  roles: Role[];
  /** The user followed the link mailed to their address (starting credits need it). */
  emailVerified: boolean;
  /** How the caller proved who it is: a browser session or an API token. */
  via: "session" | "token";
  tokenId?: string;
  /** What the token may do; a session may do whatever the user's roles allow. */
  scopes?: TokenScope[];
}

export interface Context {
  services: Services;
  caller: Caller | null;
  /** Names this request in the market's log; an error's response carries it too. */
  requestId: string;
  /** A submission's body the server read unparsed, for an intake thread (http/held-body.ts). */
  heldBody?: HeldBody | null;
  /** The network (/24 or /48) the request came from, where the route knows it (http/client-address.ts). */
  network?: string | null;
  /**
   * The caller's own credentials as sent, for a call this manager makes on the caller's behalf to
   * another manager of the market (a quote shopped among them, a submission sent to the one that
   * quoted: market/shopping.ts); and whether this call was itself sent by another manager.
   */
  credentials?: { authorization?: string; cookie?: string; forwarded: boolean };
}

export async function createContext(services: Services, headers: IncomingHttpHeaders, requestId: string): Promise<Context> {
  return { ...(await contextOf(services, headers, requestId)), credentials: credentialsOf(headers) };
}

/** The header a manager marks a call it sends to another on a caller's behalf with (market/shopping.ts). */
export const FORWARDED_HEADER = "x-market-forwarded-by";

const credentialsOf = (headers: IncomingHttpHeaders): NonNullable<Context["credentials"]> => ({
  ...(headers.authorization ? { authorization: headers.authorization } : {}),
  ...(headers.cookie ? { cookie: headers.cookie } : {}),
  forwarded: typeof headers[FORWARDED_HEADER] === "string",
});

async function contextOf(services: Services, headers: IncomingHttpHeaders, requestId: string): Promise<Context> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? "")?.[1];
  if (bearer) {
    const found = await services.tokens.lookup(bearer);
    if (!found) return { services, caller: null, requestId };
    const { user, tokenId, scopes } = found;
    return { services, requestId, caller: { id: user.id, email: user.email, name: user.name, roles: user.roles, emailVerified: user.emailVerified, via: "token", tokenId, scopes } };
  }
  // A session read a moment ago is believed for a few seconds (auth/session-cache.ts).
  const cookie = headers.cookie;
  const known = cookie ? services.sessions.get(cookie) : null;
  if (known) return { services, requestId, caller: known };
  const started = services.sessions.begin();
  const session = await services.auth.api.getSession({ headers: fromNodeHeaders(headers) });
  if (!session) return { services, caller: null, requestId };
  const user = await services.db.user.findUnique({ where: { id: session.user.id } });
  if (!user) return { services, caller: null, requestId };
  const caller: Caller = { id: user.id, email: user.email, name: user.name, roles: user.roles, emailVerified: user.emailVerified, via: "session" };
  if (cookie) services.sessions.keep(started, cookie, caller, new Date(session.session.expiresAt).getTime());
  return { services, requestId, caller };
}

const t = initTRPC.context<Context>().create({
  // Refusals carry their reason as data; a stack trace helps nobody on the other side.
  isDev: false,
  // Subscriptions (server-sent events): a ping keeps idle streams open through proxies, and a
  // client that hears nothing, not even a ping, for the reconnect time connects again.
  sse: { ping: { enabled: true, intervalMs: 10_000 }, client: { reconnectAfterInactivityMs: 30_000 } },
  errorFormatter: ({ shape, error, ctx }) => publicError(shape, error, ctx?.requestId ?? null),
});

export const router = t.router;

/** Every query's and mutation's latency, by procedure, for /metrics (a stream's lifetime is not latency). */
const timed = t.procedure.use(async ({ ctx, path, type, next }) => {
  if (type === "subscription") return next();
  const end = opsOf(ctx.services.market).metrics.api.startTimer({ procedure: path, type });
  const result = await next();
  end({ ok: String(result.ok) });
  return result;
});

export const publicProcedure = timed;

/**
 * Why a caller is not signed in, in words: a worker or script that sent a token learns that the
 * token is the trouble (unknown or revoked), not that it should sign in.
 */
export function notSignedIn(authorization: string | undefined, otherwise = "Sign in first."): string {
  return /^Bearer\s+\S/i.test(authorization ?? "") ? "This API token is not accepted: it is unknown or was revoked. Make one on the Account page." : otherwise;
}

export const signedInProcedure = timed.use(({ ctx, next }) => {
  if (!ctx.caller) throw new TRPCError({ code: "UNAUTHORIZED", message: notSignedIn(ctx.credentials?.authorization) });
  return next({ ctx: { ...ctx, caller: ctx.caller } });
});

/** A token acts only within its scopes: the SDK's `consume` token cannot run a worker, and the reverse. */
export function requireScope(caller: Caller, scope: TokenScope) {
  if (caller.via === "token" && !caller.scopes?.includes(scope)) {
    throw refuse.forbidden({ code: "token-scope", needed: scope, scopes: caller.scopes ?? [] }, `This token does not have the ${scope} scope.`);
  }
}

/** Which scope a token needs to act in each role. */
export const SCOPE_OF_ROLE = { consumer: "consume", producer: "produce" } as const satisfies Partial<Record<Role, TokenScope>>;

function withRole(role: "consumer" | "producer") {
  return signedInProcedure.use(({ ctx, next }) => {
    if (!ctx.caller.roles.includes(role) && !ctx.caller.roles.includes("admin")) {
      throw new TRPCError({ code: "FORBIDDEN", message: `This needs the ${role} role.` });
    }
    requireScope(ctx.caller, SCOPE_OF_ROLE[role]);
    return next();
  });
}

export const consumerProcedure = withRole("consumer");
export const producerProcedure = withRole("producer");
/** Only a signed-in person: a token cannot mint or revoke tokens, whatever its scopes. */
export const sessionProcedure = signedInProcedure.use(({ ctx, next }) => {
  if (ctx.caller.via !== "session") throw refuse.forbidden({ code: "token-cannot-mint" }, "Tokens cannot manage tokens; sign in.");
  return next();
});
/** A consumer signed in: moving credits between a user's own accounts is no token's business. */
export const consumerSessionProcedure = consumerProcedure.use(({ ctx, next }) => {
  if (ctx.caller.via !== "session") throw refuse.forbidden({ code: "token-scope", needed: "session", scopes: ctx.caller.scopes ?? [] }, "Moving credits needs a signed-in session.");
  return next();
});
/** Admin work is done signed in: no token scope covers it. */
export const adminProcedure = signedInProcedure.use(({ ctx, next }) => {
  if (!ctx.caller.roles.includes("admin")) throw new TRPCError({ code: "FORBIDDEN", message: "This needs the admin role." });
  if (ctx.caller.via !== "session") throw refuse.forbidden({ code: "token-scope", needed: "admin", scopes: ctx.caller.scopes ?? [] }, "Admin work needs a signed-in session.");
  return next();
});
/** Workers: a producer's API token (Node worker) or a producer's browser session (/produce). */
export const workerProcedure = producerProcedure;

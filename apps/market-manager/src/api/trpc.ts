import { initTRPC, TRPCError } from "@trpc/server";
import type { IncomingHttpHeaders } from "node:http";
import { fromNodeHeaders } from "better-auth/node";
import type { Role } from "../db/generated/enums.ts";
import type { Services } from "../services.ts";
import { userForToken } from "../auth/tokens.ts";
import { publicError } from "./public-error.ts";

export interface Caller {
  id: string;
  email: string;
  name: string;
  roles: Role[];
  /** The user followed the link mailed to their address (starting credits need it). */
  emailVerified: boolean;
  /** How the caller proved who it is: a browser session or a worker's API token. */
  via: "session" | "token";
  tokenId?: string;
}

export interface Context {
  services: Services;
  caller: Caller | null;
  /** Names this request in the market's log; an error's response carries it too. */
  requestId: string;
}

export async function createContext(services: Services, headers: IncomingHttpHeaders, requestId: string): Promise<Context> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? "")?.[1];
  if (bearer) {
    const found = await userForToken(services.db, bearer);
    if (!found) return { services, caller: null, requestId };
    const { user, tokenId } = found;
    return { services, requestId, caller: { id: user.id, email: user.email, name: user.name, roles: user.roles, emailVerified: user.emailVerified, via: "token", tokenId } };
  }
  const session = await services.auth.api.getSession({ headers: fromNodeHeaders(headers) });
  if (!session) return { services, caller: null, requestId };
  const user = await services.db.user.findUnique({ where: { id: session.user.id } });
  if (!user) return { services, caller: null, requestId };
  return { services, requestId, caller: { id: user.id, email: user.email, name: user.name, roles: user.roles, emailVerified: user.emailVerified, via: "session" } };
}

const t = initTRPC.context<Context>().create({
  // Subscriptions (server-sent events): a ping keeps idle streams open through proxies, and a
  // client that hears nothing, not even a ping, for the reconnect time connects again.
  sse: { ping: { enabled: true, intervalMs: 10_000 }, client: { reconnectAfterInactivityMs: 30_000 } },
  errorFormatter: ({ shape, error, ctx }) => publicError(shape, error, ctx?.requestId ?? null),
});

export const router = t.router;
export const publicProcedure = t.procedure;

export const signedInProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.caller) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in first." });
  return next({ ctx: { ...ctx, caller: ctx.caller } });
});

function withRole(role: Role) {
  return signedInProcedure.use(({ ctx, next }) => {
    if (!ctx.caller.roles.includes(role) && !ctx.caller.roles.includes("admin")) {
      throw new TRPCError({ code: "FORBIDDEN", message: `This needs the ${role} role.` });
    }
    return next();
  });
}

export const consumerProcedure = withRole("consumer");
export const producerProcedure = withRole("producer");
export const adminProcedure = signedInProcedure.use(({ ctx, next }) => {
  if (!ctx.caller.roles.includes("admin")) throw new TRPCError({ code: "FORBIDDEN", message: "This needs the admin role." });
  return next();
});
/** Workers: a producer's API token (Node worker) or a producer's browser session (/produce). */
export const workerProcedure = producerProcedure;

import { getTRPCErrorFromUnknown, getTRPCErrorShape, transformTRPCResponse, type TRPCError } from "@trpc/server";
import { getHTTPStatusCode } from "@trpc/server/http";
import { appRouter } from "../api/router.ts";
import { Refusal } from "../api/errors.ts";
import type { Context } from "../api/trpc.ts";
import type { Services } from "../services.ts";

// What the tRPC handler does with an error besides formatting it, in one place for the handler
// (http/server.ts) and for the calls answered beside it (http/quick-worker-route.ts).

/** The seconds to wait before retrying that a refusal for a limit names (the Retry-After header), or 0. */
export function retryAfterOf(errors: readonly TRPCError[]): number {
  return Math.max(0, ...errors.map((e) => (e instanceof Refusal && "retryAfterSeconds" in e.reason && typeof e.reason.retryAfterSeconds === "number" ? e.reason.retryAfterSeconds : 0)));
}

/** The stack of a server error stays in the market's log, under the request id the caller was given. */
export function logServerError(services: Services, error: TRPCError, path: string | undefined, requestId: string | undefined) {
  if (error.code === "INTERNAL_SERVER_ERROR") services.log(`error in ${path ?? "?"}: ${error.stack ?? error.message}`, { level: "error", requestId: requestId ?? "?", procedure: path });
}

/**
 * The answer tRPC's handler gives when mutation `path` throws `cause`: the router's own error
 * formatter (api/trpc.ts), its HTTP status, its headers, and the same log line; a batch's answer
 * is the one-element array of a batch of one.
 */
export function trpcErrorAnswer(ctx: Context, path: string, input: unknown, cause: unknown, batch: boolean) {
  const error = getTRPCErrorFromUnknown(cause);
  logServerError(ctx.services, error, path, ctx.requestId);
  const config = appRouter._def._config;
  const item = { error: getTRPCErrorShape({ config, error, type: "mutation", path, input, ctx }) };
  const headers: Record<string, string> = { vary: "trpc-accept, accept", "content-type": "application/json" };
  const retry = retryAfterOf([error]);
  if (retry > 0) headers["retry-after"] = String(retry);
  return { status: getHTTPStatusCode([item]), headers, body: JSON.stringify(transformTRPCResponse(config, batch ? [item] : item)) };
}

import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { Reason } from "../api/errors.ts";
import type { Services } from "../services.ts";
import { createContext, notSignedIn, requireScope, type Caller } from "../api/trpc.ts";
import { Refusal } from "../api/errors.ts";
import { publicReason } from "../api/public-error.ts";

// The plain HTTP routes beside tRPC (module upload, downloads) answer refusals in tRPC's error
// shape, so the SDK, the web app and curl read the same `error.data.reason` everywhere.

const STATUS = { BAD_REQUEST: 400, UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404, CONFLICT: 409, PAYLOAD_TOO_LARGE: 413 } as const;
const RPC = { BAD_REQUEST: -32600, UNAUTHORIZED: -32001, FORBIDDEN: -32003, NOT_FOUND: -32004, CONFLICT: -32009, PAYLOAD_TOO_LARGE: -32013 } as const;
export type RefusalCode = keyof typeof STATUS;

export function sendRefusal(res: ServerResponse, code: RefusalCode, reason: Reason | null, message: string) {
  res.writeHead(STATUS[code], { "content-type": "application/json", connection: "close" });
  res.end(JSON.stringify({ error: { message, code: RPC[code], data: { code, httpStatus: STATUS[code], reason: publicReason(reason, null), zodIssues: null } } }));
}

export function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** A refusal thrown by shared code (checkModule, requireScope) becomes its HTTP answer. */
export function sendThrown(res: ServerResponse, e: unknown, services: Services) {
  if (e instanceof Refusal) return sendRefusal(res, e.code as RefusalCode, e.reason, e.message);
  services.log(`error in ${res.req?.url ?? "?"}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  res.writeHead(500, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message: "Internal error.", data: { code: "INTERNAL_SERVER_ERROR", httpStatus: 500, reason: null } } }));
}

/** A consumer (or admin) signed in or holding a `consume` token, as consumerProcedure requires; else a refusal is sent. */
export async function consumerOf(services: Services, req: IncomingMessage, res: ServerResponse): Promise<Caller | null> {
  const { caller } = await createContext(services, req.headers, randomUUID());
  if (!caller) return sendRefusal(res, "UNAUTHORIZED", null, notSignedIn(req.headers.authorization, "Sign in first, or send a consume token as Authorization: Bearer.")), null;
  if (!caller.roles.includes("consumer") && !caller.roles.includes("admin")) return sendRefusal(res, "FORBIDDEN", null, "This needs the consumer role."), null;
  try {
    requireScope(caller, "consume");
  } catch (e) {
    return sendThrown(res, e, services), null;
  }
  return caller;
}

/**
 * A refusal outside tRPC (auth routes, body limits, batch sizes), in the same shape as the
 * tRPC errors' data: a code, a message and the reason as data. Retry-After when there is one.
 */
export function refuseHttp(
  res: ServerResponse,
  status: number,
  body: { code: string; message: string; reason: Reason },
  requestId: string,
) {
  const headers: Record<string, string> = { "content-type": "application/json", "x-request-id": requestId };
  if ("retryAfterSeconds" in body.reason) headers["retry-after"] = String(body.reason.retryAfterSeconds);
  res.writeHead(status, headers);
  res.end(JSON.stringify({ ...body, reason: publicReason(body.reason, requestId), requestId }));
}

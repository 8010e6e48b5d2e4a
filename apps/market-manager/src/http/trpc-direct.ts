import type http from "node:http";
import { callProcedure, getErrorShape, getHTTPStatusCode, getTRPCErrorFromUnknown, transformTRPCResponse } from "@trpc/server/unstable-core-do-not-import";
import type { TRPCError } from "@trpc/server";
import type { Services } from "../services.ts";
import { appRouter } from "../api/router.ts";
import { Refusal } from "../api/errors.ts";
import type { Context } from "../api/trpc.ts";

// A procedure called without tRPC's HTTP adapter (its web Request, streams and abort signals per
// call), through the router's own procedure, middleware and error formatter: the routes beside
// tRPC (submit-route.ts, work-stream-route.ts) answer with the bytes its adapter would send.

const config = appRouter._def._config;

/** What the HTTP handler does with an error: the stack stays in the log, under the request id the caller was given. */
export function logApiError(services: Services, error: TRPCError, path: string | undefined, requestId: string | undefined) {
  if (error.code === "INTERNAL_SERVER_ERROR") services.log(`error in ${path ?? "?"}: ${error.stack ?? error.message}`, { level: "error", requestId: requestId ?? "?", procedure: path });
}

/** A refusal for a limit says when to retry in the header clients and proxies know (the adapter's responseMeta). */
export function retryHeaders(errors: readonly TRPCError[]): Record<string, string> {
  const retry = Math.max(0, ...errors.map((e) => (e instanceof Refusal && "retryAfterSeconds" in e.reason && typeof e.reason.retryAfterSeconds === "number" ? e.reason.retryAfterSeconds : 0)));
  return retry > 0 ? { "retry-after": String(retry) } : {};
}

/** Runs the procedure at `path` as the adapter does: its middleware, input parser and resolver. */
export function callDirect(path: string, type: CallType, ctx: Context, input: unknown, signal: AbortSignal | undefined): Promise<unknown> {
  return callProcedure({ router: appRouter, path, type, ctx, getRawInput: async () => input, signal, batchIndex: 0 } as Parameters<typeof callProcedure>[0]);
}

/** The error as the adapter shapes it (the router's error formatter), after telling the log. */
export function errorShapeOf(services: Services, cause: unknown, ctx: Context, path: string, type: CallType, input: unknown) {
  const error = getTRPCErrorFromUnknown(cause);
  logApiError(services, error, path, ctx.requestId);
  return { error, shape: getErrorShape({ config, ctx, error, input, path, type }) };
}

type CallType = "query" | "mutation" | "subscription";

/** A call's outcome: its data, or its error as the router's formatter shapes it (errorShapeOf). */
export type CallAnswer = { data: unknown } | { error: TRPCError; shape: unknown };

/** A query's or mutation's answer as the adapter writes it: status, headers in its order, and body (a batch of one in an array). */
export function resultReply(batch: boolean, answer: CallAnswer) {
  return resultsReply(batch, [answer]);
}

/**
 * The answers of a request's calls as the adapter writes them: one call's alone, a batch's in an
 * array in the calls' order, its status the calls' own when they agree and 207 when they do not,
 * and the longest Retry-After of its refusals.
 */
export function resultsReply(batch: boolean, answers: CallAnswer[]) {
  const jsons = answers.map((a) => ("shape" in a ? { error: a.shape } : { result: { data: a.data } }));
  const body = batch ? jsons : jsons[0]!;
  const status = getHTTPStatusCode(body as Parameters<typeof getHTTPStatusCode>[0]);
  const errors = answers.flatMap((a) => ("error" in a ? [a.error] : []));
  // In the adapter's order: its web Headers object lists them sorted by name.
  const named: Record<string, string> = { "content-type": "application/json", vary: "trpc-accept, accept", ...retryHeaders(errors) };
  const headers: Record<string, string> = {};
  for (const name of Object.keys(named).sort()) headers[name] = named[name]!;
  return { status, headers, body: JSON.stringify(transformTRPCResponse(config, body as Parameters<typeof transformTRPCResponse>[1])) };
}

/** Sends resultReply's answer. */
export function sendResult(res: http.ServerResponse, batch: boolean, answer: CallAnswer) {
  sendResults(res, batch, [answer]);
}

/** Sends resultsReply's answer. */
export function sendResults(res: http.ServerResponse, batch: boolean, answers: CallAnswer[]) {
  const reply = resultsReply(batch, answers);
  res.statusCode = reply.status;
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  res.end(reply.body);
}

/** Hands a request whose body a route beside the adapter already read to tRPC, the general way: its node adapter takes a string body as is. */
export function handToTrpc(req: http.IncomingMessage, res: http.ServerResponse, text: string, trpc: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  (req as http.IncomingMessage & { body?: string }).body = text;
  trpc(req, res);
}

export { config as apiConfig };

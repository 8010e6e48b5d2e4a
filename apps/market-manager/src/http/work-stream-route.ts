import type http from "node:http";
import { getTRPCErrorFromUnknown, isAbortError, isTrackedEnvelope } from "@trpc/server/unstable-core-do-not-import";
import type { Services } from "../services.ts";
import { createContext, type Context } from "../api/trpc.ts";
import { apiConfig, callDirect, errorShapeOf } from "./trpc-direct.ts";

const PATH = "/api/trpc/live.work";

/** tRPC's server-sent events headers, in the order its adapter sets them (sorted by name). */
const HEADERS: [string, string][] = [
  ["cache-control", "no-cache, no-transform"],
  ["connection", "keep-alive"],
  ["content-type", "text/event-stream"],
  ["vary", "trpc-accept, accept"],
  ["x-accel-buffering", "no"],
];

const sse = apiConfig.sse ?? {};
const PING_MS = sse.ping?.enabled ? (sse.ping.intervalMs ?? 1000) : 0;
const CONNECTED = `event: connected\ndata: ${JSON.stringify(sse.client ?? {})}\n\n\n`;
const PING = "event: ping\ndata: \n\n\n";
const RETURN = "event: return\ndata: \n\n\n";
const serialize = (v: unknown) => JSON.stringify(apiConfig.transformer.output.serialize(v));

/**
 * A machine's work stream (`live.work`) written straight to its connection in tRPC's
 * server-sent events format, event for event and byte for byte (the `connected` event with the
 * client's reconnect time, each offer as `data:` with its `id:`, a `ping` after each quiet
 * interval, `return` when the stream ends, a `serialized-error` with the API's error shape), so
 * the Node worker's and the browser's unchanged tRPC clients read it as before. The stream
 * itself is the router's procedure (its middleware: the caller's role and scope, the machine
 * its own, the stream quotas). tRPC's own writer passes each event through an async generator
 * chain, two web stream transforms and a writable stream, a delay between a lease's commit and
 * its worker, and a ping that costs several times what it writes. A request it cannot read (an
 * input that is not JSON, credentials that cannot be checked now) is handed to tRPC unchanged.
 */
export function workStreamRoute(services: Services, req: http.IncomingMessage, res: http.ServerResponse, trpc: (req: http.IncomingMessage, res: http.ServerResponse) => void, requestId: string): boolean {
  if (req.method !== "GET") return false;
  const url = req.url ?? "";
  const query = url.indexOf("?");
  if ((query < 0 ? url : url.slice(0, query)) !== PATH) return false;
  const params = new URLSearchParams(query < 0 ? "" : url.slice(query + 1));
  if (params.get("batch") === "1") return false;
  void open(services, req, res, params, requestId).then((done) => {
    if (!done) trpc(req, res);
  });
  return true;
}

async function open(services: Services, req: http.IncomingMessage, res: http.ServerResponse, params: URLSearchParams, requestId: string): Promise<boolean> {
  // The procedure's signal: the client went away (cleanly or not, even before the stream began) or the stream ended.
  const abort = new AbortController();
  res.once("close", () => abort.abort());
  let input: unknown;
  let ctx: Context;
  // As the adapter reads a subscription's input: the query's JSON, with the id of the last event the client saw.
  const header = req.headers["last-event-id"];
  const lastEventId = (typeof header === "string" ? header : null) ?? params.get("lastEventId") ?? params.get("Last-Event-Id");
  try {
    const raw = params.get("input");
    input = raw ? apiConfig.transformer.input.deserialize(JSON.parse(raw)) : undefined;
    if (lastEventId) input = typeof input === "object" && input !== null && !Array.isArray(input) ? { ...input, lastEventId } : (input ?? { lastEventId });
    ctx = { ...(await createContext(services, req.headers, requestId)), heldBody: null };
  } catch {
    return false;
  }
  let stream: AsyncIterable<unknown> | null = null;
  let refused: string | null = null;
  try {
    const data = await callDirect("live.work", "subscription", ctx, input, abort.signal);
    if (data && typeof (data as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function") stream = data as AsyncIterable<unknown>;
    else refused = errorEvent(services, new Error("Subscription live.work did not return an AsyncGenerator"), ctx, input);
  } catch (cause) {
    // tRPC answers a refused subscription as a stream that carries the error.
    refused = errorEvent(services, cause, ctx, input);
  }
  res.statusCode = 200;
  for (const [name, value] of HEADERS) res.setHeader(name, value);
  res.write(CONNECTED);
  if (refused !== null) return (res.end(refused), true);
  await pump(services, res, stream!, ctx, input, abort.signal, lastEventId && !/[\0\n\r]/.test(lastEventId) ? lastEventId : null);
  return true;
}

function errorEvent(services: Services, cause: unknown, ctx: Context, input: unknown) {
  const error = getTRPCErrorFromUnknown(cause);
  return `event: serialized-error\ndata: ${serialize(errorShapeOf(services, error, ctx, "live.work", "subscription", input).shape)}\n\n\n`;
}

/** Each value of the stream as its event, a ping after each quiet interval, until the stream or the connection ends. */
async function pump(services: Services, res: http.ServerResponse, stream: AsyncIterable<unknown>, ctx: Context, input: unknown, signal: AbortSignal, resumedFrom: string | null) {
  let lastEventId = resumedFrom;
  const write = async (text: string) => {
    if (res.destroyed || res.writableEnded) return;
    if (!res.write(text)) await drained(res);
    ping?.refresh();
  };
  const ping = PING_MS > 0 ? setTimeout(function beat() {
    if (res.destroyed || res.writableEnded) return;
    res.write(PING);
    ping!.refresh();
  }, PING_MS) : null;
  const iterator = stream[Symbol.asyncIterator]();
  try {
    for (;;) {
      const step = await iterator.next();
      if (step.done) break;
      if (signal.aborted) continue; // the connection is gone: let the stream end
      const value = step.value;
      if (isTrackedEnvelope(value)) {
        lastEventId = value[0];
        await write(`data: ${serialize(value[1])}\nid: ${value[0]}\n\n\n`);
      } else if (lastEventId === null) await write(`data: ${serialize(value)}\n\n\n`);
      else await write(`data: ${serialize(value)}\nid: \n\n\n` + `event: restore-id\ndata: \nid: ${lastEventId}\n\n\n`);
    }
    await write(RETURN);
  } catch (cause) {
    if (!isAbortError(cause)) await write(errorEvent(services, cause, ctx, input));
  } finally {
    if (ping) clearTimeout(ping);
    if (!res.writableEnded) res.end();
  }
}

function drained(res: http.ServerResponse) {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

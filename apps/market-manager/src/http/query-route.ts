import type http from "node:http";
import type { Services } from "../services.ts";
import { createContext, type Context } from "../api/trpc.ts";
import { callDirect, errorShapeOf, sendResults, type CallAnswer } from "./trpc-direct.ts";

const PREFIX = "/api/trpc/";

/**
 * What an open job page and every page's header poll (apps/web: `jobs.get` every second, the
 * progress chart, the outputs as tasks finish, the balance): many calls a second from consumers
 * watching their jobs, each of which cost the market tRPC's HTTP adapter (a web Request with its
 * streams and abort signals) before its procedure ran, more than the procedure itself.
 */
const PAGE_QUERIES = new Set(["jobs.get", "jobs.progress", "jobs.outputs", "ledger.balance"]);

/**
 * The pages' polls, alone or batched as the web app's batching link sends them (`GET
 * /api/trpc/jobs.get,jobs.progress?batch=1&input=...`), called through the router's own
 * procedures (middleware, quotas, input schemas) without tRPC's HTTP adapter; the answer, every
 * call's data or refusal, is the adapter's to the byte (trpc-direct.ts, and
 * test/integration/direct-routes.test.ts compares them). Anything else, or anything unusual about
 * such a request (another procedure in the batch, a streaming accept header, a parameter the
 * adapter reads that this does not, input that is not JSON, credentials that cannot be checked
 * now), goes to tRPC before anything is done. Returns false when the request is not such a call.
 */
export function queryRoute(services: Services, req: http.IncomingMessage, res: http.ServerResponse, trpc: (req: http.IncomingMessage, res: http.ServerResponse) => void, requestId: string): boolean {
  if (req.method !== "GET" || req.headers["trpc-accept"] !== undefined || /application\/jsonl/i.test(req.headers.accept ?? "")) return false;
  const calls = callsOf(req.url ?? "/");
  if (!calls) return false;
  void answer(services, req, res, calls, requestId).then((done) => {
    if (!done) trpc(req, res);
  });
  return true;
}

interface Calls {
  batch: boolean;
  paths: string[];
  inputs: unknown[];
}

/** The request's calls, when every one is a page query and its input reads as the adapter reads it; else null. */
function callsOf(url: string): Calls | null {
  if (!url.startsWith(PREFIX)) return null;
  const query = url.indexOf("?");
  const params = new URLSearchParams(query < 0 ? "" : url.slice(query + 1));
  for (const key of params.keys()) if (key !== "batch" && key !== "input") return null;
  const batchParam = params.get("batch");
  if (batchParam !== null && batchParam !== "1") return null;
  const batch = batchParam === "1";
  try {
    const path = decodeURIComponent(url.slice(PREFIX.length, query < 0 ? undefined : query));
    const paths = batch ? path.split(",") : [path];
    if (!paths.every((p) => PAGE_QUERIES.has(p))) return null;
    const text = params.get("input");
    const parsed: unknown = text ? JSON.parse(text) : undefined;
    if (!batch) return { batch, paths, inputs: [parsed] };
    // The adapter refuses a batch's input that is not an object: its refusal is its own to give.
    if (parsed !== undefined && (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))) return null;
    const byIndex = (parsed ?? {}) as Record<string, unknown>;
    return { batch, paths, inputs: paths.map((_, i) => byIndex[i]) };
  } catch {
    return null;
  }
}

/** Runs the calls side by side, as the adapter does, and answers them together; false (nothing done) when the caller cannot be checked now. */
async function answer(services: Services, req: http.IncomingMessage, res: http.ServerResponse, { batch, paths, inputs }: Calls, requestId: string): Promise<boolean> {
  let ctx: Context;
  try {
    ctx = { ...(await createContext(services, req.headers, requestId)), heldBody: null };
  } catch {
    return false;
  }
  const answers = await Promise.all(
    paths.map(async (path, i): Promise<CallAnswer> => {
      try {
        return { data: await callDirect(path, "query", ctx, inputs[i], undefined) };
      } catch (cause) {
        return errorShapeOf(services, cause, ctx, path, "query", inputs[i]);
      }
    }),
  );
  sendResults(res, batch, answers);
  return true;
}

import type http from "node:http";
import { clientNetwork, managerProxies } from "./client-address.ts";
import type { Services } from "../services.ts";
import { createContext, type Context } from "../api/trpc.ts";
import { OFF_THREAD_MIN_BYTES } from "./held-body.ts";
import { callDirect, errorShapeOf, handToTrpc, sendResult } from "./trpc-direct.ts";

const PATH = "/api/trpc/jobs.submit";

/**
 * `jobs.submit` of a small job (a body read on the market's thread, see held-body.ts), called
 * through the router's own procedure (its middleware, quotas, input schema and error formatter)
 * without tRPC's HTTP adapter, whose per-request machinery (a web Request, its body stream, abort
 * signals) costs more than the procedure's own work for a small job: a submission to an idle
 * machine is the market's latency-bound path. The answer, success or refusal, is the adapter's to
 * the byte (trpc-direct.ts). A request it cannot read as one JSON call (a batch of several, a body
 * that is not JSON, credentials that cannot be checked now) is handed to tRPC before anything is
 * done, with the body already read. Returns false when the request is not such a call.
 */
export function submitRoute(services: Services, req: http.IncomingMessage, res: http.ServerResponse, trpc: (req: http.IncomingMessage, res: http.ServerResponse) => void, requestId: string): boolean {
  if (req.method !== "POST") return false;
  const url = req.url ?? "";
  const query = url.indexOf("?");
  if ((query < 0 ? url : url.slice(0, query)) !== PATH) return false;
  const search = query < 0 ? "" : url.slice(query + 1);
  if (search !== "" && search !== "batch=1") return false;
  const declared = Number(req.headers["content-length"]);
  if (!(declared < OFF_THREAD_MIN_BYTES) || !/^application\/json\b/i.test(req.headers["content-type"] ?? "")) return false;
  const batch = search === "batch=1";
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.once("error", () => {}); // the client went away: nothing to answer
  req.once("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    void answer(services, req, res, text, batch, requestId).then((done) => {
      if (done) return;
      handToTrpc(req, res, text, trpc);
    });
  });
  return true;
}

async function answer(services: Services, req: http.IncomingMessage, res: http.ServerResponse, text: string, batch: boolean, requestId: string): Promise<boolean> {
  let input: unknown;
  let ctx: Context;
  try {
    const body = JSON.parse(text) as unknown;
    if (batch && (typeof body !== "object" || body === null || Object.keys(body).length !== 1 || !Object.hasOwn(body, "0"))) return false;
    input = batch ? (body as Record<string, unknown>)["0"] : body;
    ctx = { ...(await createContext(services, req.headers, requestId)), heldBody: null, network: clientNetwork(req, managerProxies(services.config.TRUSTED_PROXIES)) };
  } catch {
    return false;
  }
  try {
    sendResult(res, batch, { data: await callDirect("jobs.submit", "mutation", ctx, input, undefined) });
  } catch (cause) {
    sendResult(res, batch, errorShapeOf(services, cause, ctx, "jobs.submit", "mutation", input));
  }
  return true;
}

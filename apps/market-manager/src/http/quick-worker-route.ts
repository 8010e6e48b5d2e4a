import type http from "node:http";
import { HeartbeatRequest, LeaseRequest } from "@cyclemarket/worker-runtime";
import type { Services } from "../services.ts";
import { createContext, requireScope, type Caller } from "../api/trpc.ts";
import { heardFrom, heartbeat, leaseNothing } from "../resources/leases.ts";
import { opsOf } from "../ops/ops.ts";

/** A heartbeat's body is a machine id and at most 1,024 lease ids: anything longer goes the general way. */
const MAX_BODY_BYTES = 64 * 1024;
const PREFIX = "/api/trpc/";

/**
 * The worker calls answered here when they can be answered at once, by procedure: the answer's
 * data, or null to hand the call to tRPC. A heartbeat always can; a lease only when it gets
 * nothing (leaseNothing), which is most lease calls of a market with more slots than work.
 */
const QUICK: Record<string, (services: Services, caller: Caller, input: unknown) => unknown> = {
  "worker.heartbeat": (services, caller, input) => {
    const parsed = HeartbeatRequest.safeParse(input);
    return parsed.success ? heartbeat(services.market, caller, parsed.data.machineId, parsed.data.leaseIds) : null;
  },
  "worker.lease": (services, caller, input) => {
    const parsed = LeaseRequest.safeParse(input);
    return parsed.success ? leaseNothing(services.market, heardFrom(services.market, caller, parsed.data.machineId), parsed.data.max) : null;
  },
};

/**
 * `worker.heartbeat`, the call every machine makes every few seconds (10,000 machines: a
 * thousand a second), and `worker.lease` when there is nothing to lease, answered without tRPC's
 * per-request machinery (a web Request, its streams and abort signal, the middleware chain),
 * which costs several times the call itself (bench/call-costs.ts). Only a call that succeeds at
 * once is answered here, with exactly the bytes tRPC would send (no transformer:
 * `{"result":{"data":...}}`, in an array for a batch of one as the workers' `httpBatchLink` sends
 * it); anything else (no or bad credentials, a bad body, a departed machine, a lease that finds
 * work, a batch of several calls) is handed to tRPC with the body already read, so its refusals
 * and its leases stay the API's own. Returns false when the request is not such a call at all.
 */
export function quickWorkerRoute(services: Services, req: http.IncomingMessage, res: http.ServerResponse, trpc: (req: http.IncomingMessage, res: http.ServerResponse) => void, requestId: string): boolean {
  if (req.method !== "POST") return false;
  const url = req.url ?? "";
  const query = url.indexOf("?");
  const path = query < 0 ? url : url.slice(0, query);
  const procedure = path.startsWith(PREFIX) ? path.slice(PREFIX.length) : "";
  const quick = Object.hasOwn(QUICK, procedure) ? QUICK[procedure]! : null;
  if (!quick) return false;
  const batch = query >= 0 && new URLSearchParams(url.slice(query + 1)).get("batch") === "1";
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  };
  req.on("data", onData);
  req.once("error", () => {}); // the client went away: nothing to answer
  req.once("end", () => {
    req.off("data", onData);
    if (size > MAX_BODY_BYTES) return void res.writeHead(413, { "content-type": "application/json", connection: "close" }).end(JSON.stringify({ error: { message: "A heartbeat or a lease call is small.", data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 413, reason: { code: "request-too-large", bytes: size, maxBytes: MAX_BODY_BYTES } } } }));
    const text = Buffer.concat(chunks).toString("utf8");
    void answer(services, req, res, text, batch, requestId, procedure, quick).then((done) => {
      if (done) return;
      // The general way, with the body tRPC would have read (its node adapter takes a string body as is).
      (req as http.IncomingMessage & { body?: string }).body = text;
      trpc(req, res);
    });
  });
  return true;
}

/** Answers a call that succeeds at once; false for anything tRPC should answer. */
async function answer(services: Services, req: http.IncomingMessage, res: http.ServerResponse, text: string, batch: boolean, requestId: string, procedure: string, quick: (typeof QUICK)[string]): Promise<boolean> {
  try {
    const body = JSON.parse(text) as unknown;
    const input = batch ? (body as Record<string, unknown> | null)?.["0"] : body;
    if (batch && Object.keys(body as object).length !== 1) return false;
    // As workerProcedure: a signed-in producer (or admin), and a token with the produce scope.
    const { caller } = await createContext(services, req.headers, requestId);
    if (!caller || (!caller.roles.includes("producer") && !caller.roles.includes("admin"))) return false;
    requireScope(caller, "produce");
    const end = opsOf(services.market).metrics.api.startTimer({ procedure, type: "mutation" });
    const data = quick(services, caller, input);
    if (data === null) return false;
    end({ ok: "true" });
    const result = { result: { data } };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(batch ? [result] : result));
    return true;
  } catch {
    return false;
  }
}

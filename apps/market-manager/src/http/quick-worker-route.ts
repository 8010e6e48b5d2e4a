import type http from "node:http";
import { HeartbeatRequest, LeaseRequest, RegisterRequest, ReportAndLeaseRequest, ReportManyRequest } from "@cyclemarket/worker-runtime";
import type { Services } from "../services.ts";
import type { Reason } from "../api/errors.ts";
import { createContext, requireScope, type Caller, type Context } from "../api/trpc.ts";
import { checkReport, heardFrom, heartbeat, leaseHeard, reportAndLease, reportMany } from "../resources/leases.ts";
import { checkOffer, joinOpportunistic } from "../resources/machines.ts";
import { errorShapeOf, handToTrpc, resultReply } from "./trpc-direct.ts";
import type { Gone } from "../tasks/report-batch.ts";
import { opsOf } from "../ops/ops.ts";
import { clientNetwork, managerProxies } from "./client-address.ts";

/** A heartbeat's body is a machine id and at most 1,024 lease ids, a registration's a machine's profile: anything longer goes the general way. */
const MAX_BODY_BYTES = 64 * 1024;
/** Reports answered here declare their length, at most this (a trivial task's report is a few hundred bytes); longer ones, or a body without a length, go to tRPC unread. */
const MAX_REPORT_BYTES = 1024 * 1024;
const PREFIX = "/api/trpc/";

/**
 * The worker calls answered here when they can be, by procedure. A call's function returns null
 * to hand the call to tRPC, which it does when it would refuse it (it throws, or finds the input
 * not of its schema), before anything happened; or the answer's data; or a promise of it, for a
 * call that has begun to act (a report joined the group commit): from then on its error is
 * answered here too, as tRPC answers it (trpc-direct.ts). A heartbeat always answers at once; a
 * lease at once when it gets nothing (leaseNothing), which is most lease calls of a market with
 * more slots than work, and otherwise once its group commit has written it; a report once every
 * check it can fail on arrival passed (checkReport); a registration once its machine's row is
 * written, its offer checked first (checkOffer; a dedicated offer, decided in the market's step,
 * goes to tRPC).
 */
type Quick = (services: Services, caller: Caller, input: unknown, signal: Gone | undefined, req: http.IncomingMessage) => unknown;

const QUICK: Record<string, Quick> = {
  "worker.heartbeat": (services, caller, input) => {
    const parsed = HeartbeatRequest.safeParse(input);
    return parsed.success ? heartbeat(services.market, caller, parsed.data.machineId, parsed.data.leaseIds) : null;
  },
  "worker.lease": (services, caller, input, signal) => {
    const parsed = LeaseRequest.safeParse(input);
    if (!parsed.success) return null;
    return leaseHeard(services.market, caller, heardFrom(services.market, caller, parsed.data.machineId), parsed.data.max, signal);
  },
  "worker.register": (services, caller, input, _signal, req) => {
    const parsed = RegisterRequest.safeParse(input);
    if (!parsed.success || parsed.data.kind === "dedicated") return null;
    // One that may be sent to another manager goes to tRPC, which routes it once (a refusal here
    // is answered by tRPC running the procedure again, and a second routing would count it twice);
    // so does a machine offered to several, which a manager holding it already refuses.
    if (parsed.data.offerKey !== undefined || (parsed.data.follow && (services.market.managers?.alive().length ?? 0) > 1)) return null;
    checkOffer(parsed.data);
    // The network it joins from, as the tRPC route records it: copies of one network count once in a quorum.
    return joinOpportunistic(services.market, caller, parsed.data, clientNetwork(req, managerProxies(services.config.TRUSTED_PROXIES)));
  },
  "worker.report": (services, caller, input, signal) => {
    const parsed = ReportAndLeaseRequest.safeParse(input);
    if (!parsed.success) return null;
    const { lease, ...report } = parsed.data;
    return reportAndLease(services.market, caller, checkReport(services.market, caller, report), lease, signal);
  },
  // Each report's refusal is its own answer in the call's data: only the call's shape refuses it.
  "worker.reportMany": (services, caller, input, signal) => {
    const parsed = ReportManyRequest.safeParse(input);
    return parsed.success ? reportMany(services.market, caller, parsed.data.reports, signal, parsed.data.lease) : null;
  },
};

/** The calls that may carry a long body: read here up to MAX_REPORT_BYTES when their length is declared. */
const REPORTS = new Set(["worker.report", "worker.reportMany"]);
/** The calls that wait for their group commit: their client's leaving is heard (a report or lease whose client has gone is dropped, as tRPC's signal does). */
const WAITING = new Set([...REPORTS, "worker.lease"]);

/**
 * The calls every machine makes all the time, answered without tRPC's per-request machinery (a
 * web Request, its streams and abort signal, the middleware chain), which costs several times the
 * call itself (bench/call-costs.ts): `worker.heartbeat` (a thousand a second from 10,000 machines),
 * `worker.lease`, `worker.report` and `worker.reportMany`, the call of every finished task, and
 * `worker.register`, which a thousand machines joining at once all make in their first seconds.
 * The answer has exactly the bytes tRPC would send (no
 * transformer: `{"result":{"data":...}}`, or the error's shape from the router's own formatter;
 * in an array for a batch of one as `httpBatchLink` sends it). Any call this route would refuse
 * before acting (no or bad credentials, a bad body, a departed or foreign machine, a report whose
 * output does not match its hash, an offer no market takes), a dedicated offer, a batch of
 * several calls, is handed to tRPC with the body already read, so its refusals stay the API's own. Returns
 * false when the request is not such a call at all (or a report too long to be read here).
 */
export function quickWorkerRoute(services: Services, req: http.IncomingMessage, res: http.ServerResponse, trpc: (req: http.IncomingMessage, res: http.ServerResponse) => void, requestId: string): boolean {
  if (req.method !== "POST") return false;
  const url = req.url ?? "";
  const query = url.indexOf("?");
  const path = query < 0 ? url : url.slice(0, query);
  const procedure = path.startsWith(PREFIX) ? path.slice(PREFIX.length) : "";
  const quick = Object.hasOwn(QUICK, procedure) ? QUICK[procedure]! : null;
  if (!quick) return false;
  const reports = REPORTS.has(procedure);
  if (reports) {
    const declared = Number(req.headers["content-length"] ?? NaN);
    if (!(declared <= MAX_REPORT_BYTES)) return false;
  }
  const batch = query >= 0 && new URLSearchParams(url.slice(query + 1)).get("batch") === "1";
  const chunks: Buffer[] = [];
  let size = 0;
  // Listeners written in place, unnamed: the runner names every function it sees assigned, at each call.
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES || reports) chunks.push(chunk);
  });
  req.once("error", () => {}); // the client went away: nothing to answer
  req.once("end", () => {
    if (size > MAX_BODY_BYTES && !reports) return void tooLarge(res, size);
    const text = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
    void answer(services, req, res, text, batch, requestId, procedure, quick, WAITING.has(procedure)).then((done) => {
      if (done) return;
      handToTrpc(req, res, text, trpc);
    });
  });
  return true;
}

/** Answers a call this route takes; false for anything tRPC should answer. */
async function answer(services: Services, req: http.IncomingMessage, res: http.ServerResponse, text: string, batch: boolean, requestId: string, procedure: string, quick: Quick, waits: boolean): Promise<boolean> {
  let ctx: Context;
  let input: unknown;
  let data: unknown;
  let end: (labels: { ok: string }) => void;
  try {
    const body = JSON.parse(text) as unknown;
    input = batch ? (body as Record<string, unknown> | null)?.["0"] : body;
    if (batch && Object.keys(body as object).length !== 1) return false;
    // As workerProcedure: a signed-in producer (or admin), and a token with the produce scope.
    ctx = await createContext(services, req.headers, requestId);
    const caller = ctx.caller;
    if (!caller || (!caller.roles.includes("producer") && !caller.roles.includes("admin"))) return false;
    requireScope(caller, "produce");
    end = opsOf(services.market).metrics.api.startTimer({ procedure, type: "mutation" });
    data = quick(services, caller, input, waits ? gone(res) : undefined, req);
    if (data === null) return false;
  } catch {
    return false;
  }
  let reply: { status: number; headers: Record<string, string>; body: string };
  try {
    const result = { result: { data: data instanceof Promise ? await data : data } };
    reply = { status: 200, headers: ANSWER_HEADERS, body: JSON.stringify(batch ? [result] : result) };
    end({ ok: "true" });
  } catch (e) {
    // The call acted already: tRPC cannot take it over, so its error is answered as tRPC would.
    reply = resultReply(batch, errorShapeOf(services, e, ctx, procedure, "mutation", input));
    end({ ok: "false" });
  }
  // One body of known length: no chunk framing for the client to read.
  if (!res.destroyed) res.writeHead(reply.status, { ...reply.headers, "content-length": Buffer.byteLength(reply.body) }).end(reply.body);
  return true;
}

/** tRPC's headers on an answer of data. */
const ANSWER_HEADERS = { "content-type": "application/json", vary: "trpc-accept, accept" };

/** Says the client left before its answer was sent: all a report's group asks of a signal, without an AbortController's cost. */
function gone(res: http.ServerResponse): Gone {
  const left = { aborted: false };
  res.once("close", () => {
    if (!res.writableFinished) left.aborted = true;
  });
  return left;
}

/** A heartbeat, lease or registration call past its size, refused in tRPC's error shape. */
function tooLarge(res: http.ServerResponse, bytes: number) {
  const reason: Reason = { code: "request-too-large", bytes, maxBytes: MAX_BODY_BYTES };
  res.writeHead(413, { "content-type": "application/json", connection: "close" });
  res.end(JSON.stringify({ error: { message: "A heartbeat, a lease or a registration call is small.", data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 413, reason } } }));
}

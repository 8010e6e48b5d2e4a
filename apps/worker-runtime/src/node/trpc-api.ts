// WorkerApi over the Market Manager's tRPC API (procedures `worker.<name>`; `module` is a
// query, the others are mutations; the work stream is the subscription `live.work`, over
// server-sent events). Answers are checked against the api.ts schemas, so a mismatch between
// service and worker shows up as a clear error here rather than deep in the loop.
import { createTRPCClient, httpSubscriptionLink, TRPCClientError } from "@trpc/client";
import { WORKER_PROCEDURES, WorkStreamRequest, type WorkerApi } from "../api.ts";
import { workStreamCallbacks } from "../work-stream.ts";
import { NodeEventSource } from "./event-source.ts";
import { transportFetch } from "./http-transport.ts";

/**
 * Calls `worker.<name>` exactly as tRPC's `httpLink` sends it (a query as GET with `?input=`, a
 * mutation as POST with the input as its JSON body, content-type first, then the caller's headers)
 * and reads the answer as it does, with the same TRPCClientError on a refusal; without the link's
 * observables and its two abort controllers per call, which cost a worker more than the call's bytes.
 */
export function workerCaller(url: string, token: string) {
  const endpoint = url.replace(/\/+$/, "") + "/api/trpc/worker.";
  const headers = { authorization: "Bearer " + token };
  const postHeaders = { "content-type": "application/json", ...headers };
  const answer = async (res: Promise<Awaited<ReturnType<typeof transportFetch>>>): Promise<unknown> => {
    let json: { result?: { data?: unknown }; error?: unknown };
    try {
      json = (await (await res).json()) as typeof json;
    } catch (cause) {
      throw TRPCClientError.from(cause as Error);
    }
    if (json && typeof json === "object" && "error" in json) throw TRPCClientError.from(json as never);
    if (!json || typeof json !== "object" || !json.result) throw TRPCClientError.from(new Error("Invalid response or stream interrupted"));
    return json.result.data;
  };
  return {
    query: (name: string, input: unknown) =>
      answer(transportFetch(input === undefined ? endpoint + name : `${endpoint}${name}?input=${encodeURIComponent(JSON.stringify(input))}`, { method: "GET", headers })),
    mutate: (name: string, input: unknown) =>
      answer(transportFetch(endpoint + name, { method: "POST", headers: postHeaders, ...(input === undefined ? {} : { body: JSON.stringify(input) }) })),
  };
}

export function createTrpcApi(url: string, token: string): WorkerApi {
  const endpoint = url.replace(/\/+$/, "") + "/api/trpc";
  const headers = { authorization: "Bearer " + token };
  // Typed loosely until the router type is exported by @cyclemarket/market-manager: the
  // client is cast through `any` in this one file, and the schemas above guard the answers.
  // Only the work stream goes through tRPC's client (its subscription link and reconnection);
  // every other call is one request of its own through workerCaller.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const client = createTRPCClient<any>({
    links: [httpSubscriptionLink({ url: endpoint, EventSource: NodeEventSource, eventSourceOptions: { headers } })],
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
  }) as any;
  const call = workerCaller(url, token);
  return {
    register: async (input) => WORKER_PROCEDURES.register.output.parse(await call.mutate("register", WORKER_PROCEDURES.register.input.parse(input))),
    lease: async (input) => WORKER_PROCEDURES.lease.output.parse(await call.mutate("lease", input)),
    module: async (input) => WORKER_PROCEDURES.module.output.parse(await call.query("module", input)),
    heartbeat: async (input) => WORKER_PROCEDURES.heartbeat.output.parse(await call.mutate("heartbeat", input)),
    report: async (input) => WORKER_PROCEDURES.report.output.parse(await call.mutate("report", input)),
    reportMany: async (input) => WORKER_PROCEDURES.reportMany.output.parse(await call.mutate("reportMany", input)),
    depart: async (input) => {
      await call.mutate("depart", input);
    },
    offer: async (input) => WORKER_PROCEDURES.offer.output.parse(await call.mutate("offer", WORKER_PROCEDURES.offer.input.parse(input))),
    watchWork: (input, handlers) => {
      const subscription = client.live.work.subscribe(WorkStreamRequest.parse(input), workStreamCallbacks(handlers));
      return () => subscription.unsubscribe();
    },
  };
}

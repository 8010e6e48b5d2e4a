// WorkerApi over the Market Manager's tRPC API (procedures `worker.<name>`; `module` is a
// query, the others are mutations; the work stream is the subscription `live.work`, over
// server-sent events). Answers are checked against the api.ts schemas, so a mismatch between
// service and worker shows up as a clear error here rather than deep in the loop.
import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { WORKER_PROCEDURES, WorkStreamRequest, type WorkerApi } from "../api.ts";
import { workStreamCallbacks } from "../work-stream.ts";
import { NodeEventSource } from "./event-source.ts";
import { transportFetch } from "./http-transport.ts";

export function createTrpcApi(url: string, token: string): WorkerApi {
  const endpoint = url.replace(/\/+$/, "") + "/api/trpc";
  const headers = { authorization: "Bearer " + token };
  // Typed loosely until the router type is exported by @cyclemarket/market-manager: the
  // client is cast through `any` in this one file, and the schemas above guard the answers.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const client = createTRPCClient<any>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({ url: endpoint, EventSource: NodeEventSource, eventSourceOptions: { headers } }),
        // One request per call, sent at once: the loop makes few calls (its reports already go
        // together, with its next lease), and a batching link would hold each for a timer first.
        // Over the worker's keep-alive transport: the same bytes as the platform's fetch, at less cost per call.
        false: httpLink({ url: endpoint, headers, fetch: transportFetch }),
      }),
    ],
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
  }) as any;
  const worker = client.worker;

  return {
    register: async (input) => WORKER_PROCEDURES.register.output.parse(await worker.register.mutate(WORKER_PROCEDURES.register.input.parse(input))),
    lease: async (input) => WORKER_PROCEDURES.lease.output.parse(await worker.lease.mutate(input)),
    module: async (input) => WORKER_PROCEDURES.module.output.parse(await worker.module.query(input)),
    heartbeat: async (input) => WORKER_PROCEDURES.heartbeat.output.parse(await worker.heartbeat.mutate(input)),
    report: async (input) => WORKER_PROCEDURES.report.output.parse(await worker.report.mutate(input)),
    reportMany: async (input) => WORKER_PROCEDURES.reportMany.output.parse(await worker.reportMany.mutate(input)),
    depart: async (input) => {
      await worker.depart.mutate(input);
    },
    offer: async (input) => WORKER_PROCEDURES.offer.output.parse(await worker.offer.mutate(WORKER_PROCEDURES.offer.input.parse(input))),
    watchWork: (input, handlers) => {
      const subscription = client.live.work.subscribe(WorkStreamRequest.parse(input), workStreamCallbacks(handlers));
      return () => subscription.unsubscribe();
    },
  };
}

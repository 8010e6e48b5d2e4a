// WorkerApi over the Market Manager's tRPC API (procedures `worker.<name>`; `module` is a
// query, the others are mutations). Answers are checked against the api.ts schemas, so a
// mismatch between service and worker shows up as a clear error here rather than deep in the loop.
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { WORKER_PROCEDURES, type WorkerApi } from "../api.ts";

export function createTrpcApi(url: string, token: string): WorkerApi {
  // Typed loosely until the router type is exported by @cyclemarket/market-manager: the
  // client is cast through `any` in this one file, and the schemas above guard the answers.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const client = createTRPCClient<any>({
    links: [httpBatchLink({ url: url.replace(/\/+$/, "") + "/api/trpc", headers: { authorization: "Bearer " + token } })],
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
  }) as any;
  const worker = client.worker;

  return {
    register: async (input) => WORKER_PROCEDURES.register.output.parse(await worker.register.mutate(WORKER_PROCEDURES.register.input.parse(input))),
    lease: async (input) => WORKER_PROCEDURES.lease.output.parse(await worker.lease.mutate(input)),
    module: async (input) => WORKER_PROCEDURES.module.output.parse(await worker.module.query(input)),
    heartbeat: async (input) => WORKER_PROCEDURES.heartbeat.output.parse(await worker.heartbeat.mutate(input)),
    report: async (input) => WORKER_PROCEDURES.report.output.parse(await worker.report.mutate(input)),
    depart: async (input) => {
      await worker.depart.mutate(input);
    },
  };
}

"use client";
// The producer protocol (worker.register/lease/module/heartbeat/report/offer/depart, and the work
// stream live.work) over this page's tRPC client, as the worker runtime's producer loop expects
// it. The browser's session cookie authenticates it; Node workers use an API token instead.
import type { TRPCClient } from "@trpc/client";
import { workStreamCallbacks, type WorkerApi } from "@cyclemarket/worker-runtime/browser";
import type { AppRouter } from "./trpc";

export function createProducerApi(client: TRPCClient<AppRouter>): WorkerApi {
  return {
    register: (input) => client.worker.register.mutate(input),
    lease: (input) => client.worker.lease.mutate(input),
    module: (input) => client.worker.module.query(input),
    heartbeat: (input) => client.worker.heartbeat.mutate(input),
    report: (input) => client.worker.report.mutate(input),
    // Results finished together go in one call, which also asks for the next tasks (report-many.ts).
    reportMany: (input) => client.worker.reportMany.mutate(input),
    // The capacity this tab offers (its controls: pause, CPU limit, schedule, only while idle).
    offer: (input) => client.worker.offer.mutate(input),
    depart: async (input) => {
      await client.worker.depart.mutate(input);
    },
    // The work stream (`live.work`): this page's client sends subscriptions over server-sent events.
    watchWork: (input, handlers) => {
      const subscription = client.live.work.subscribe(input, workStreamCallbacks(handlers));
      return () => subscription.unsubscribe();
    },
  };
}

/**
 * Tells the market this machine is leaving, from `pagehide`: a keepalive request outlives the
 * page, so the tab's unfinished tasks go back to the market at once (missed heartbeats are the
 * fallback). tRPC accepts the raw JSON input of a non-batched POST.
 */
export function departOnUnload(machineId: string): void {
  try {
    void fetch("/api/trpc/worker.depart", {
      method: "POST",
      keepalive: true,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ machineId }),
    });
  } catch {
    // The page is going away; the lease timeout returns the tasks.
  }
}

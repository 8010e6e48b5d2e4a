// WorkerApi over the Market Manager's tRPC API (procedures `worker.<name>`; `module` is a
// query, the others are mutations; the work stream is the subscription `live.work`, over
// server-sent events). Answers are checked against the api.ts schemas, so a mismatch between
// service and worker shows up as a clear error here rather than deep in the loop.
import { createTRPCClient, httpSubscriptionLink, TRPCClientError } from "@trpc/client";
import { ManagersResponse, WhereIsResponse, WORKER_PROCEDURES, WorkStreamRequest, type WorkerApi } from "../api.ts";
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

/** A call that got no answer from the market at all (refused connection, a proxy's 502): not a refusal. */
const noAnswer = (e: unknown) => !(e as { data?: unknown } | null)?.data;

/** The market's answer that the machine registers with another Market Manager (several managers). */
const elsewhere = (e: unknown): { managerId: string; managerUrl: string } | null => {
  const reason = (e as { data?: { reason?: { code?: unknown; managerId?: unknown; managerUrl?: unknown } } } | null)?.data?.reason;
  return reason?.code === "register-elsewhere" && typeof reason.managerId === "string" && typeof reason.managerUrl === "string"
    ? { managerId: reason.managerId, managerUrl: reason.managerUrl }
    : null;
};

const reasonCode = (e: unknown): unknown => (e as { data?: { reason?: { code?: unknown } } } | null)?.data?.reason?.code;

/** The market's answer that the machine is held by another Market Manager now, and its address. */
const movedTo = (e: unknown): string | null => {
  const reason = (e as { data?: { reason?: { code?: unknown; managerUrl?: unknown } } } | null)?.data?.reason;
  return reason?.code === "machine-moved" && typeof reason.managerUrl === "string" ? reason.managerUrl : null;
};

/**
 * How long after its machine was handed to another manager the worker takes that manager's "no
 * such machine" as "not yet": the new manager reads handed machines in at its next stamp, every
 * second (market-manager's machine-handoff.ts).
 */
export const HANDOFF_GRACE_MS = 15_000;

/**
 * The worker's calls over HTTP. `url` is the market's front door (the web app, or any Market
 * Manager): a market of several managers answers the registration with the manager that holds
 * the machine, and every call and the work stream go there after. When that manager stops
 * answering (it died), the front door is asked which manager holds the machine now (another
 * takes it over once the dead one's timeout passed), and the calls follow; until then they fail
 * as any unanswered call does, and the producer loop tries them again, its tasks still running.
 * A machine handed from one manager to another while both run is answered `machine-moved` by the
 * first, and its calls and work stream follow it.
 */
export function createTrpcApi(url: string, token: string, options: { manager?: string } = {}): WorkerApi {
  const front = url.replace(/\/+$/, "");
  let current = front;
  let machineId: string | null = null;
  const callers = new Map<string, ReturnType<typeof workerCaller>>();
  const callerAt = (at: string) => {
    let c = callers.get(at);
    if (!c) callers.set(at, (c = workerCaller(at, token)));
    return c;
  };
  const headers = { authorization: "Bearer " + token };
  // Only the work stream goes through tRPC's client (its subscription link and reconnection);
  // every other call is one request of its own through workerCaller. Typed loosely until the
  // router type is exported by @cyclemarket/market-manager: the schemas above guard the answers.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const clientAt = (at: string): any =>
    createTRPCClient<any>({ links: [httpSubscriptionLink({ url: at + "/api/trpc", EventSource: NodeEventSource, eventSourceOptions: { headers } })] });
  const streams = new Set<{ open(): void; close(): void }>();
  const currentUrl = () => current;
  const moveTo = (at: string) => {
    at = at.replace(/\/+$/, "");
    if (at === current) return;
    current = at;
    for (const s of streams) {
      s.close();
      s.open();
    }
  };
  /** When the machine was last handed to another manager: until that one has read it in, it may not know it yet. */
  let handedAt = -Infinity;
  /** A call to the manager the machine was just handed to, which does not know it yet, failed for now (not: the machine is gone). */
  const notYet = (e: unknown): unknown =>
    reasonCode(e) === "machine-departed" && Date.now() - handedAt < HANDOFF_GRACE_MS ? new Error("the machine's new Market Manager has not read it in yet") : e;
  /**
   * A call to the machine's manager. Answered `machine-moved` (it was handed to another manager),
   * the call is made there once, and so are the calls after it. With no answer, the front door says
   * where the machine is now, and the call is made there once.
   */
  const followed = async (call: (c: ReturnType<typeof workerCaller>) => Promise<unknown>): Promise<unknown> => {
    try {
      return await call(callerAt(current));
    } catch (e) {
      const moved = movedTo(e);
      if (moved) {
        handedAt = Date.now();
        moveTo(moved);
        try {
          return await call(callerAt(current));
        } catch (again) {
          throw notYet(again);
        }
      }
      if (!noAnswer(e)) throw notYet(e);
      if (current === front || machineId === null) throw e;
      const where = WhereIsResponse.parse(await callerAt(front).query("whereIs", { machineId }));
      if (where.managerUrl === null) moveTo(front);
      else if (where.alive) moveTo(where.managerUrl);
      else throw e; // its manager is silent and nobody has taken it over yet
      return call(callerAt(current));
    }
  };
  const register = async (input: Parameters<WorkerApi["register"]>[0]) => {
    const request = WORKER_PROCEDURES.register.input.parse({ ...input, follow: true, ...(options.manager ? { manager: options.manager } : {}) });
    let answer: unknown;
    try {
      answer = await callerAt(current).mutate("register", request);
    } catch (e) {
      const to = elsewhere(e);
      if (!to) {
        // A manager that does not answer is no place to register: the next attempt goes to the front door.
        if (noAnswer(e)) moveTo(front);
        throw e;
      }
      moveTo(to.managerUrl);
      answer = await callerAt(current).mutate("register", { ...request, manager: to.managerId });
    }
    const registration = WORKER_PROCEDURES.register.output.parse(answer);
    machineId = registration.machineId;
    if (registration.managerUrl) moveTo(registration.managerUrl);
    return registration;
  };
  return {
    register,
    lease: async (input) => WORKER_PROCEDURES.lease.output.parse(await followed((c) => c.mutate("lease", input))),
    module: async (input) => WORKER_PROCEDURES.module.output.parse(await followed((c) => c.query("module", input))),
    heartbeat: async (input) => WORKER_PROCEDURES.heartbeat.output.parse(await followed((c) => c.mutate("heartbeat", input))),
    report: async (input) => WORKER_PROCEDURES.report.output.parse(await followed((c) => c.mutate("report", input))),
    reportMany: async (input) => WORKER_PROCEDURES.reportMany.output.parse(await followed((c) => c.mutate("reportMany", input))),
    depart: async (input) => {
      await followed((c) => c.mutate("depart", input));
    },
    offer: async (input) => WORKER_PROCEDURES.offer.output.parse(await followed((c) => c.mutate("offer", WORKER_PROCEDURES.offer.input.parse(input)))),
    watchWork: (input, handlers) => {
      const request = WorkStreamRequest.parse(input);
      let subscription: { unsubscribe(): void } | null = null;
      let opened = 0;
      // The stream follows the machine to its manager: opened again there when the calls move,
      // and what the one closed for the move says after (its end) is not the stream's.
      const stream = {
        open: () => {
          const mine = ++opened;
          const current = (): boolean => mine === opened;
          subscription = clientAt(currentUrl()).live.work.subscribe(
            request,
            workStreamCallbacks({
              offer: (o) => current() && handlers.offer(o),
              state: (st) => current() && handlers.state(st),
              end: (e) => {
                if (!current()) return;
                // A handoff the stream hears of before any call does: the calls and the stream follow.
                const moved = e ? movedTo(e) : null;
                if (moved && moved.replace(/\/+$/, "") !== currentUrl()) {
                  handedAt = Date.now();
                  moveTo(moved);
                  return;
                }
                // The new manager has not read the machine in yet: open again shortly, within the grace.
                if (e && reasonCode(e) === "machine-departed" && Date.now() - handedAt < HANDOFF_GRACE_MS) {
                  setTimeout(() => current() && (stream.close(), stream.open()), 1000);
                  return;
                }
                handlers.end(e);
              },
            }),
          );
        },
        close: () => {
          opened++;
          subscription?.unsubscribe();
        },
      };
      streams.add(stream);
      stream.open();
      return () => {
        streams.delete(stream);
        stream.close();
      };
    },
  };
}

/**
 * The market's live Market Managers, the most room first, as its front door `url` knows them
 * (`worker.managers`): a worker offering its machine to several picks among them.
 */
export async function liveManagersAt(url: string, token: string): Promise<ManagersResponse["managers"]> {
  return ManagersResponse.parse(await workerCaller(url.replace(/\/+$/, ""), token).query("managers", undefined)).managers;
}

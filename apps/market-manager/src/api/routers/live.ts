import { z } from "zod";
import { tracked } from "@trpc/server";
import { WorkStreamRequest, type WorkOffer } from "@cyclemarket/worker-runtime";
import { adminProcedure, router, workerProcedure } from "../trpc.ts";
import { ownMachine } from "../../resources/machines.ts";
import { changes } from "../live/changes.ts";
import { streamLeases, workOnOffer } from "../live/work.ts";
import { marketOverview } from "../market-overview.ts";
import type { Market } from "../../market/market.ts";
import type { Services } from "../../services.ts";
import { refuse } from "../errors.ts";
import { holdStream } from "../limit-procedures.ts";
import { setTimeout as sleep } from "node:timers/promises";
import { marketPulse } from "../../ops/pulse.ts";

// Subscriptions over server-sent events: the market pushes what used to be polled. Each stream
// holds one listener on the market's events while its client is connected (live/changes.ts).

export const LiveResume = z.object({ lastEventId: z.string().nullish() }).optional();
export type LiveResume = z.infer<typeof LiveResume>;

/** The version of the live state a pushed view shows: this run of the market and its event count. */
const versionOf = (market: Market) => `${market.run}.${market.revision}`;

/** Views that show heartbeat times are sent again this often even in a quiet market. */
const MARKET_REFRESH_MS = 10_000;
/** A busy market's dashboard is rebuilt at most this often. */
const MARKET_MIN_GAP_MS = 500;
/** The admin's figures of the moment are sent this often. */
const PULSE_MS = 1000;

/** A worker's stream for its own machine only, refused exactly as `worker.lease` is refused. */
const machineStreamProcedure = workerProcedure.input(WorkStreamRequest).use(({ ctx, input, signal, next }) => {
  ownMachine(ctx.services.market, ctx.caller, input.machineId);
  const max = ctx.services.config.STREAMS_PER_MACHINE;
  return holdStream(
    () => ctx.services.quotas.machineStreams.take(input.machineId),
    () => streamRefusal("streams-per-machine", max),
    signal,
    () => userStream(ctx, signal, next),
  );
});

/** Streams open at once per machine and per user: each holds a listener on the market's events. */
function streamRefusal(limit: "streams-per-machine" | "streams-per-user", max: number) {
  return refuse.tooMany(
    { code: "limit-reached", limit, max, retryAfterSeconds: 10 },
    `At most ${max} live streams may be open ${limit === "streams-per-machine" ? "for one machine" : "for one user"}; close one first.`,
  );
}

export function userStream<T extends { ok: boolean }>(ctx: { caller: { id: string }; services: Services }, signal: AbortSignal | undefined, next: () => Promise<T>) {
  const max = ctx.services.config.STREAMS_PER_USER;
  return holdStream(() => ctx.services.quotas.userStreams.take(ctx.caller.id), () => streamRefusal("streams-per-user", max), signal, next);
}

const adminStreamProcedure = adminProcedure.use(({ ctx, signal, next }) => userStream(ctx, signal, next));

export const liveRouter = router({
  /**
   * The admin's market overview (`admin.overview`), sent when it connects and again whenever the
   * market changes. A client that reconnects with the version it already shows is not sent it again.
   */
  market: adminStreamProcedure.input(LiveResume).subscription(async function* ({ ctx, input, signal }) {
    const { db, market } = ctx.services;
    let shown = input?.lastEventId ?? null;
    for await (const _ of changes(market, signal, { everyMs: MARKET_REFRESH_MS, minGapMs: MARKET_MIN_GAP_MS })) {
      const version = versionOf(market);
      if (version === shown) {
        shown = null; // only the reconnect's first view is skipped; the refresh still comes
        continue;
      }
      shown = null;
      yield tracked(version, await marketOverview(db, market));
    }
  }),

  /** The market's figures of the moment (ops/pulse.ts), once a second, for the admin's dashboard. */
  pulse: adminStreamProcedure.subscription(async function* ({ ctx, signal }) {
    const { market, clock } = ctx.services;
    // On a fixed beat (not a pause after each figure), so the time to compute and send one does
    // not slow the page's updates below one a second.
    let next = performance.now();
    while (!signal?.aborted) {
      yield marketPulse(market, clock.now());
      next = Math.max(next + PULSE_MS, performance.now() - PULSE_MS);
      await sleep(Math.max(0, next - performance.now()), undefined, { signal }).catch(() => {});
    }
  }),

  /**
   * Tells a worker's machine that the market has work for it (when it connects, and whenever that
   * its queue grows); the worker then leases with `worker.lease`, so
   * leases stay transactional and recoverable. Ends with `machine-departed` once the machine is gone.
   */
  work: machineStreamProcedure.subscription(async function* ({ ctx, input, signal }) {
    const market = ctx.services.market;
    // Woken only by events about this machine, or when it is idle and work spare elsewhere (market/work-routes.ts).
    const listen = (mark: () => void) => market.workRoutes.watch(input.machineId, mark, input.lease?.max ?? 0);
    // Leases already made for it are sent at once, before answers waiting to be written (the submitter's).
    const urgent = () => market.workRoutes.hasPushed(input.machineId);
    for await (const _ of changes(market, signal, { listen, urgent })) {
      const machine = ownMachine(market, ctx.caller, input.machineId);
      let available = workOnOffer(market, machine);
      market.workRoutes.markIdle(machine.id, available <= 0);
      // Leases a new job's admission made for this idle machine (tasks/admission-leases.ts).
      const pushed = market.workRoutes.takePushed(machine.id);
      if (pushed.length) {
        yield tracked(versionOf(market), { machineId: machine.id, available: Math.max(0, available), leases: pushed } satisfies WorkOffer);
        continue;
      }
      if (available <= 0) continue;
      // Only an event about this machine's queue (or spare work while it idles) wakes the stream,
      // so every wake-up with work on offer is news to the worker. A worker that takes leases on
      // its stream and holds none is leased here, in the market's group commit like its own call.
      const leases = input.lease && machine.leases.size === 0 ? await streamLeases(market, ctx.caller, machine.id, input.lease.max, signal) : [];
      if (leases.length) available = workOnOffer(market, machine);
      if (signal?.aborted) return void market.workRoutes.unsent(leases);
      if (available > 0 || leases.length) yield tracked(versionOf(market), { machineId: machine.id, available: Math.max(0, available), ...(leases.length ? { leases } : {}) } satisfies WorkOffer);
    }
  }),
});

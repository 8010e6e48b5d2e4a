import type { Db } from "../db/client.ts";
import type { Market } from "../market/market.ts";
import { jobSummaries } from "../tasks/views.ts";
import { marketBooks } from "../ledger/statement.ts";
import { standingView } from "../market/standing.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { offerRows } from "../db/sql/market-managers.ts";

/**
 * The admin's view of the market: the books, every machine with its live queue and leases, every
 * job. The same view answers `admin.overview` and is pushed by `live.market`.
 */
export async function marketOverview(db: Db, market: Market) {
  const machines = await db.machine.findMany({
    orderBy: [{ status: "asc" }, { registeredAt: "desc" }],
    // The dashboard pages through them; a thousand machines are a few hundred kilobytes.
    take: 2000,
    include: { owner: { select: { email: true, emailVerified: true, createdAt: true, standing: true } } },
  });
  const jobs = await jobSummaries(db, {});
  // A machine offered to several managers: the other managers holding a row of it (the same offerKey).
  const offerKeys = [...new Set(machines.flatMap((m) => (m.offerKey && m.status === "active" ? [m.offerKey] : [])))];
  const offered = offerKeys.length ? await runStatement(viaPrisma(db), offerRows, { offerKeys }) : [];
  return {
    books: await marketBooks(market.resources.database.reads),
    machines: machines.map((m) => {
      const live = market.state.machines.get(m.id);
      return {
        id: m.id,
        name: m.name,
        owner: m.owner.email,
        kind: m.kind,
        status: m.status,
        /** The Market Manager that holds it (market/managers.ts). */
        manager: m.managerId,
        /** The manager it drains toward, and since when: an admin moved it while busy (market/machine-drains.ts). */
        drainingTo: m.drainingTo,
        drainingSince: m.drainingSince?.getTime() ?? null,
        /** The other managers this machine is offered to at once, each through a row of its own. */
        alsoOfferedTo: m.offerKey && m.status === "active" ? offered.filter((o) => o.offerKey === m.offerKey && o.id !== m.id && o.managerId !== null).map((o) => o.managerId!) : [],
        slots: m.slots,
        speed: m.speed,
        memoryPerSlotMb: m.memoryPerSlotMb,
        pricePerSecond: Number(m.pricePerSecondMicro) / 1_000_000,
        // Its owner's standing (market/standing.ts): what verification counts its results as.
        standing: standingView(market, m.owner),
        queued: live?.queue.length ?? 0,
        running: live?.leases.size ?? 0,
        registeredAt: m.registeredAt.getTime(),
        lastHeartbeatAt: m.lastHeartbeatAt.getTime(),
        departedAt: m.departedAt?.getTime() ?? null,
      };
    }),
    jobs,
    /** Open live streams: dashboards listen to the market's events, work streams to their machine's route. */
    streams: market.events.listenerCount("event") + market.workRoutes.size(),
  };
}

export type MarketOverview = Awaited<ReturnType<typeof marketOverview>>;

import { adminProcedure, router } from "../trpc.ts";
import { jobSummaries } from "../../tasks/views.ts";
import { marketBooks } from "../../ledger/statement.ts";

export const adminRouter = router({
  overview: adminProcedure.query(async ({ ctx }) => {
    const { db, market } = ctx.services;
    const machines = await db.machine.findMany({
      orderBy: [{ status: "asc" }, { registeredAt: "desc" }],
      take: 500,
      include: { owner: { select: { email: true } } },
    });
    const jobs = await jobSummaries(db, {});
    return {
      books: await marketBooks(db),
      machines: machines.map((m) => {
        const live = market.state.machines.get(m.id);
        return {
          id: m.id,
          name: m.name,
          owner: m.owner.email,
          kind: m.kind,
          status: m.status,
          slots: m.slots,
          speed: m.speed,
          memoryPerSlotMb: m.memoryPerSlotMb,
          pricePerSecond: Number(m.pricePerSecondMicro) / 1_000_000,
          queued: live?.queue.length ?? 0,
          running: live?.leases.size ?? 0,
          registeredAt: m.registeredAt.toISOString(),
          lastHeartbeatAt: m.lastHeartbeatAt.toISOString(),
          departedAt: m.departedAt?.toISOString() ?? null,
        };
      }),
      jobs,
    };
  }),
});

import { adminProcedure, router } from "../trpc.ts";
import { jobSummaries } from "../../tasks/views.ts";
import { marketBooks } from "../../ledger/statement.ts";
import { AdminSettingsPatch, changeSettings } from "../../market/settings.ts";
import { POLICY_NAMES } from "@cyclemarket/costbenefit";

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
          reputation: m.reputation,
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

  settings: router({
    get: adminProcedure.query(async ({ ctx }) => {
      const changes = await ctx.services.db.settingChange.findMany({
        orderBy: { createdAt: "desc" },
        take: 50,
        include: { user: { select: { email: true } } },
      });
      return {
        current: ctx.services.market.adminSettings,
        policies: POLICY_NAMES,
        changes: changes.map((c) => ({ key: c.key, from: c.oldValue, to: c.newValue, by: c.user.email, at: c.createdAt.toISOString() })),
      };
    }),
    /** Every change is recorded with who made it, then applied to the live market. */
    set: adminProcedure.input(AdminSettingsPatch).mutation(({ ctx, input }) => changeSettings(ctx.services.market, ctx.caller.id, input)),
  }),
});

import { adminProcedure, router } from "../trpc.ts";
import { marketOverview } from "../market-overview.ts";
import { AdminSettingsPatch, changeSettings } from "../../market/settings.ts";
import { POLICY_NAMES } from "@cyclemarket/costbenefit";
import { HistoryRange, historyRange } from "../../ops/history.ts";
import { DecisionFilter, listDecisions } from "../../ops/decision-log.ts";
import { AdminGrant, grantCredits, recentGrants } from "../../ledger/admin-grant.ts";
import { CancelDrains, MoveMachines, cancelDrains, moveMachines } from "../../market/machine-moves.ts";

export const adminRouter = router({
  overview: adminProcedure.query(({ ctx }) => marketOverview(ctx.services.db, ctx.services.market)),
  /** The market's Market Managers as the one answering saw them at its last stamp (market/managers.ts). */
  managers: adminProcedure.query(({ ctx }) => {
    const managers = ctx.services.market.managers;
    return { self: managers?.self.id ?? null, timeoutMs: managers?.self.timeoutMs ?? null, managers: managers?.view ?? [] };
  }),
  /** Moves machines to another live Market Manager: idle ones at once, busy ones once drained; each refused one with its reason. */
  moveMachines: adminProcedure.input(MoveMachines).mutation(({ ctx, input }) => moveMachines(ctx.services.market, ctx, ctx.caller, input)),
  /** Cancels the drains of machines moved while busy: they take work where they are again. */
  cancelDrains: adminProcedure.input(CancelDrains).mutation(({ ctx, input }) => cancelDrains(ctx.services.market, ctx, ctx.caller, input)),
  /** The market's vital signs over the last `seconds` (README "History"). */
  history: adminProcedure.input(HistoryRange).query(({ ctx, input }) => historyRange(ctx.services.db, input, ctx.services.clock.now())),
  /** The decision log: every admission, delay, rejection, placement, move and departure, with reasons. */
  decisions: adminProcedure.input(DecisionFilter).query(({ ctx, input }) => listDecisions(ctx.services.db, input)),
  /** Credits from the market's account to a consumer's, with the admin's name and reason on the entry. */
  grantCredits: adminProcedure.input(AdminGrant).mutation(({ ctx, input }) => grantCredits(ctx.services.db, { id: ctx.caller.id, name: ctx.caller.name }, input)),
  /** The latest grants: when, to whom, how much, by whom and why. */
  grants: adminProcedure.query(({ ctx }) => recentGrants(ctx.services.db)),

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
        changes: changes.map((c) => ({ key: c.key, from: c.oldValue, to: c.newValue, by: c.user.email, at: c.createdAt.getTime() })),
      };
    }),
    /** Every change is recorded with who made it, then applied to the live market. */
    set: adminProcedure.input(AdminSettingsPatch).mutation(({ ctx, input }) => changeSettings(ctx.services.market, ctx.caller.id, input)),
  }),
});

import { adminProcedure, router } from "../trpc.ts";
import { marketOverview } from "../market-overview.ts";
import { AdminSettingsPatch, changeSettings } from "../../market/settings.ts";
import { POLICY_NAMES } from "@cyclemarket/costbenefit";
import { HistoryRange, historyRange } from "../../ops/history.ts";
import { DecisionFilter, listDecisions } from "../../ops/decision-log.ts";

export const adminRouter = router({
  overview: adminProcedure.query(({ ctx }) => marketOverview(ctx.services.db, ctx.services.market)),
  /** The market's vital signs over the last `seconds` (README "History"). */
  history: adminProcedure.input(HistoryRange).query(({ ctx, input }) => historyRange(ctx.services.db, input, ctx.services.clock.now())),
  /** The decision log: every admission, delay, rejection, placement, move and departure, with reasons. */
  decisions: adminProcedure.input(DecisionFilter).query(({ ctx, input }) => listDecisions(ctx.services.db, input)),

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

import { router, signedInProcedure } from "../trpc.ts";
import { earningsSeries } from "../../ledger/earnings-series.ts";
import { producerEarnings, statement } from "../../ledger/statement.ts";
import { ensureStartingCredits } from "../../ledger/starting-credits.ts";

export const ledgerRouter = router({
  statement: signedInProcedure.query(async ({ ctx }) => {
    // A verified consumer whose grant did not happen yet (an account from before, or a reserve
    // that has been topped up since) gets it at their look; unverified callers never queue for it.
    if (ctx.caller.roles.includes("consumer") && ctx.caller.emailVerified) await ensureStartingCredits(ctx.services.market, ctx.caller.id);
    return statement(ctx.services.db, ctx.caller.id);
  }),
  /** A producer's earnings per hour over the last day, and what its work sold for. */
  earnings: signedInProcedure.query(({ ctx }) => producerEarnings(ctx.services.db, ctx.caller.id, ctx.services.clock.now())),
  /** The same earnings per hour over two days and per day over thirty, for the earnings chart. */
  earningsSeries: signedInProcedure.query(({ ctx }) => earningsSeries(ctx.services.db, ctx.caller.id, ctx.services.clock.now())),
});

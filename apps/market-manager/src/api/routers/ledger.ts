import { consumerSessionProcedure, router, signedInProcedure, type Caller } from "../trpc.ts";
import type { Services } from "../../services.ts";
import { earningsSeries } from "../../ledger/earnings-series.ts";
import { spendingSeries } from "../../ledger/spending-series.ts";
import { balances, producerEarnings, statement } from "../../ledger/statement.ts";
import { ensureStartingCredits } from "../../ledger/starting-credits.ts";
import { EarningsTransfer, transferEarnings } from "../../ledger/earnings-transfer.ts";

/**
 * A verified consumer whose grant did not happen yet (an account from before, or a reserve that
 * has been topped up since) gets it at their look at their money; unverified callers never queue for it.
 */
async function grantAtLook(ctx: { caller: Caller; services: Services }) {
  if (ctx.caller.roles.includes("consumer") && ctx.caller.emailVerified) await ensureStartingCredits(ctx.services.market, ctx.caller.id);
}

export const ledgerRouter = router({
  statement: signedInProcedure.query(async ({ ctx }) => {
    await grantAtLook(ctx);
    return statement(ctx.services.database.reads, ctx.caller.id);
  }),
  /** The balances and what running jobs hold, without the statement's lines: what a page's header polls. */
  balance: signedInProcedure.query(async ({ ctx }) => {
    await grantAtLook(ctx);
    return balances(ctx.services.database.reads, ctx.caller.id);
  }),
  /** A producer's earnings per hour over the last day, and what its work sold for. */
  earnings: signedInProcedure.query(({ ctx }) => producerEarnings(ctx.services.database.reads, ctx.caller.id, ctx.services.clock.now())),
  /** The same earnings per hour over two days and per day over thirty, for the earnings chart. */
  earningsSeries: signedInProcedure.query(({ ctx }) => earningsSeries(ctx.services.database.reads, ctx.caller.id, ctx.services.clock.now())),
  /** Moves the caller's producer earnings (all, or `credits` of them) to their consumer balance. */
  transferEarnings: consumerSessionProcedure.input(EarningsTransfer).mutation(({ ctx, input }) => transferEarnings(ctx.services.db, ctx.caller.id, input)),
  /** What the consumer was charged for its jobs per hour over two days and per day over thirty, for the spending chart. */
  spendingSeries: signedInProcedure.query(({ ctx }) => spendingSeries(ctx.services.database.reads, ctx.caller.id, ctx.services.clock.now())),
});

import { router, signedInProcedure } from "../trpc.ts";
import { statement } from "../../ledger/statement.ts";
import { ensureStartingCredits } from "../../ledger/starting-credits.ts";

export const ledgerRouter = router({
  statement: signedInProcedure.query(async ({ ctx }) => {
    // Consumers from before grants came with the role get theirs at their first look.
    if (ctx.caller.roles.includes("consumer")) await ensureStartingCredits(ctx.services.market, ctx.caller.id);
    return statement(ctx.services.db, ctx.caller.id);
  }),
});

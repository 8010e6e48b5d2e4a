import { router, signedInProcedure } from "../trpc.ts";
import { statement } from "../../ledger/statement.ts";

export const ledgerRouter = router({
  statement: signedInProcedure.query(({ ctx }) => statement(ctx.services.db, ctx.caller.id)),
});

import { z } from "zod";
import { nameText } from "@cyclemarket/worker-runtime";
import { publicProcedure, router, sessionProcedure, SCOPE_OF_ROLE } from "../trpc.ts";
import { createApiToken } from "../../auth/tokens.ts";
import { chooseRoles } from "../../auth/roles.ts";
import { refuse } from "../errors.ts";
import { toCredits } from "../../ledger/ledger.ts";

export const ChooseRoles = z.object({
  roles: z.array(z.enum(["producer", "consumer"])).min(1, "Choose at least one role."),
});
export type ChooseRoles = z.infer<typeof ChooseRoles>;

export const TokenScopeName = z.enum(["produce", "consume"]);
export type TokenScopeName = z.infer<typeof TokenScopeName>;

export const CreateToken = z.object({
  name: nameText(80, "A token's name"),
  /** What the token may do: run workers (produce), submit and read jobs (consume). */
  scopes: z.array(TokenScopeName).min(1, "Choose what the token may do.").default(["produce"]),
});
export type CreateToken = z.infer<typeof CreateToken>;

export const accountRouter = router({
  me: publicProcedure.query(
    ({ ctx }) =>
      ctx.caller && {
        id: ctx.caller.id,
        email: ctx.caller.email,
        name: ctx.caller.name,
        roles: ctx.caller.roles,
        emailVerified: ctx.caller.emailVerified,
        /** What a consumer is granted once their address is verified (the admin's setting). */
        startingCredits: toCredits(ctx.services.market.settings.startingCreditsMicro),
      },
  ),

  /** Mails the verification link again (the first one went out at sign-up). */
  resendVerification: sessionProcedure.mutation(async ({ ctx }) => {
    if (ctx.caller.emailVerified) throw refuse.conflict({ code: "already-verified" }, "Your email address is already confirmed.");
    await ctx.services.auth.api.sendVerificationEmail({ body: { email: ctx.caller.email, callbackURL: "/account/confirmed" } });
    return { sent: true };
  }),

  chooseRoles: sessionProcedure.input(ChooseRoles).mutation(async ({ ctx, input }) => {
    const chosen = await chooseRoles(ctx.services.market, ctx.caller, input.roles);
    // The user's tokens act with the roles just chosen from the next call on.
    ctx.services.tokens.forget({ userId: ctx.caller.id });
    ctx.services.sessions.forget(ctx.caller.id);
    return chosen;
  }),

  // Tokens are managed signed in only: a token cannot mint another (its own scopes or wider).
  tokens: router({
    list: sessionProcedure.query(({ ctx }) =>
      ctx.services.db.apiToken.findMany({
        where: { userId: ctx.caller.id, revokedAt: null },
        orderBy: { createdAt: "desc" },
        select: { id: true, name: true, prefix: true, scopes: true, createdAt: true, lastUsedAt: true },
      }),
    ),
    /** The token itself is returned once and never stored. Each scope needs its role. */
    create: sessionProcedure.input(CreateToken).mutation(({ ctx, input }) => {
      for (const scope of input.scopes) {
        const role = scope === SCOPE_OF_ROLE.consumer ? "consumer" : "producer";
        if (!ctx.caller.roles.includes(role) && !ctx.caller.roles.includes("admin")) {
          throw refuse.forbidden({ code: "scope-needs-role", scope, role }, `The ${scope} scope needs the ${role} role.`);
        }
      }
      return createApiToken(ctx.services.db, ctx.caller.id, input.name, input.scopes);
    }),
    revoke: sessionProcedure.input(z.object({ id: z.string().uuid() })).mutation(async ({ ctx, input }) => {
      const { count } = await ctx.services.db.apiToken.updateMany({
        where: { id: input.id, userId: ctx.caller.id, revokedAt: null },
        data: { revokedAt: new Date() },
      });
      if (count !== 1) throw refuse.notFound("token");
      ctx.services.tokens.forget({ tokenId: input.id });
      return { revoked: true };
    }),
  }),
});

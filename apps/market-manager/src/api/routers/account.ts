import { z } from "zod";
import { nameText } from "@cyclemarket/worker-runtime";
import { publicProcedure, producerProcedure, router, signedInProcedure } from "../trpc.ts";
import { createApiToken } from "../../auth/tokens.ts";
import { chooseRoles } from "../../auth/roles.ts";
import { refuse } from "../errors.ts";
import { toCredits } from "../../ledger/ledger.ts";

export const ChooseRoles = z.object({
  roles: z.array(z.enum(["producer", "consumer"])).min(1, "Choose at least one role."),
});
export type ChooseRoles = z.infer<typeof ChooseRoles>;

export const CreateToken = z.object({ name: nameText(80, "A token's name") });
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
  resendVerification: signedInProcedure.mutation(async ({ ctx }) => {
    if (ctx.caller.emailVerified) throw refuse.conflict({ code: "already-verified" }, "Your email address is already confirmed.");
    await ctx.services.auth.api.sendVerificationEmail({ body: { email: ctx.caller.email, callbackURL: "/account/credits" } });
    return { sent: true };
  }),

  chooseRoles: signedInProcedure.input(ChooseRoles).mutation(({ ctx, input }) => chooseRoles(ctx.services.market, ctx.caller, input.roles)),

  tokens: router({
    list: producerProcedure.query(({ ctx }) =>
      ctx.services.db.apiToken.findMany({
        where: { userId: ctx.caller.id, revokedAt: null },
        orderBy: { createdAt: "desc" },
        select: { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true },
      }),
    ),
    /** The token itself is returned once and never stored. */
    create: producerProcedure.input(CreateToken).mutation(({ ctx, input }) => createApiToken(ctx.services.db, ctx.caller.id, input.name)),
    revoke: producerProcedure.input(z.object({ id: z.string().uuid() })).mutation(async ({ ctx, input }) => {
      const { count } = await ctx.services.db.apiToken.updateMany({
        where: { id: input.id, userId: ctx.caller.id, revokedAt: null },
        data: { revokedAt: new Date() },
      });
      if (count !== 1) throw refuse.notFound("token");
      return { revoked: true };
    }),
  }),
});

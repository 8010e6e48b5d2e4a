import { z } from "zod";
import { nameText } from "@cyclemarket/worker-runtime";
import type { Db } from "../db/client.ts";
import { refuse } from "../api/errors.ts";
import { post, toCredits, toMicro, type Tx } from "./ledger.ts";
import { adminGrant, adminGrantKey } from "./entries.ts";

// An admin grants credits to a consumer (a refund, a prize, a top-up paid for outside the market):
// one balanced entry from the market's own account, whose floor is minus its reserve (an admin
// setting), to the consumer's, naming the admin and the reason, which the consumer's statement
// shows. The form makes an id per grant, and the entry's unique key is that id, so a second click
// (or a retried request) grants nothing more.

/** The most one grant gives. */
export const MAX_GRANT_CREDITS = 1_000_000;

export const AdminGrant = z.object({
  grantId: z.uuid("grantId must be a UUID, one per grant."),
  email: z.string().trim().toLowerCase().max(254, "An email address is at most 254 characters.").pipe(z.email("Enter the consumer's email address.")),
  credits: z
    .number({ error: "Credits must be a number." })
    .positive("Grant more than 0 credits.")
    .max(MAX_GRANT_CREDITS, `At most ${MAX_GRANT_CREDITS.toLocaleString("en")} credits in one grant.`)
    .refine((c) => Math.abs(c * 1e6 - Math.round(c * 1e6)) < 1e-3, "Credits have at most 6 decimals."),
  reason: nameText(200, "The reason").refine((s) => s.length >= 3, "Say why, in 3 to 200 characters."),
});
export type AdminGrant = z.infer<typeof AdminGrant>;

/** The rule's one writer is entries.ts `adminGrant`. */
export const postAdminGrant = (tx: Tx, g: Parameters<typeof adminGrant>[0]) => post(tx, adminGrant(g));

/**
 * Grants `input.credits` to the consumer with that address. Refused, changing nothing, for an
 * address no consumer has, and when the market's reserve cannot cover it (insufficient-credits on
 * the market's account). The same grantId again answers what the first call granted.
 */
export async function grantCredits(db: Db, admin: { id: string; name: string }, input: AdminGrant) {
  const user = await db.user.findFirst({ where: { email: { equals: input.email, mode: "insensitive" } }, select: { id: true, email: true, roles: true } });
  if (!user) throw refuse.notFound("account");
  if (!user.roles.includes("consumer")) {
    throw refuse.badRequest({ code: "not-a-consumer", email: user.email }, `${user.email} is not a consumer: only consumers spend credits.`);
  }
  const amount = toMicro(input.credits);
  const granted = await db.$transaction((tx) => postAdminGrant(tx, { grantId: input.grantId, userId: user.id, amount, admin, reason: input.reason }));
  if (granted) return { granted: toCredits(amount), to: user.email, already: false };
  // Granted before under this id: what that grant gave, to whom.
  const entry = await db.ledgerEntry.findUniqueOrThrow({
    where: { uniqueKey: adminGrantKey(input.grantId) },
    select: { postings: { where: { amountMicro: { gt: 0n } }, select: { amountMicro: true, account: { select: { userId: true } } } } },
  });
  const credit = entry.postings[0]!;
  const to = credit.account.userId === user.id ? user.email : ((await db.user.findUnique({ where: { id: credit.account.userId! }, select: { email: true } }))?.email ?? "?");
  return { granted: toCredits(credit.amountMicro), to, already: true };
}

/** The latest grants, newest first, for /admin: when, to whom, how much, by whom and why. */
export async function recentGrants(db: Db, take = 20) {
  const entries = await db.ledgerEntry.findMany({
    where: { kind: "admin-grant" },
    orderBy: { createdAt: "desc" },
    take,
    select: { createdAt: true, memo: true, postings: { where: { amountMicro: { gt: 0n } }, select: { amountMicro: true, account: { select: { userId: true } } } } },
  });
  const users = await db.user.findMany({ where: { id: { in: entries.flatMap((e) => e.postings.map((p) => p.account.userId!)) } }, select: { id: true, email: true } });
  const email = new Map(users.map((u) => [u.id, u.email]));
  return entries.map((e) => {
    const memo = (e.memo ?? {}) as { admin?: string; reason?: string };
    const credit = e.postings[0];
    return { at: e.createdAt.getTime(), to: credit ? (email.get(credit.account.userId!) ?? "?") : "?", credits: credit ? toCredits(credit.amountMicro) : 0, by: memo.admin ?? "?", reason: memo.reason ?? "" };
  });
}

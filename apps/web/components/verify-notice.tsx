"use client";
import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { credits } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { Alert, Button } from "./ui";
import { useMe } from "./session";

/**
 * A signed-in user whose address is not confirmed yet: where the link went, what confirming
 * brings (a consumer's starting credits), and a way to have it sent again.
 */
export function VerifyEmailNotice() {
  const me = useMe();
  const trpc = useTRPC();
  const resend = useMutation(trpc.account.resendVerification.mutationOptions());
  if (!me.data || me.data.emailVerified) return null;
  const grant = me.data.startingCredits > 0 ? ` Consumers receive ${credits(me.data.startingCredits)} of starting credits once it is confirmed.` : "";
  return (
    <div className="mx-auto max-w-6xl px-4 pt-6 sm:px-6" data-testid="verify-email">
      <Alert tone="info" title="Confirm your email address">
        <p>
          We sent a link to <bdi className="font-medium">{me.data.email}</bdi>; follow it to confirm the address is yours.{grant}
        </p>
        {/* The market sends no mail over the network (auth/mailer.ts): say where the link really is. */}
        <p className="mt-1 text-xs">
          This market keeps its mail on the machine that runs it: the link is printed in the market&apos;s log (&ldquo;mail to&nbsp;&hellip;&rdquo;) and kept in <code>.data/outbox.jsonl</code> there.
        </p>
        <div className="mt-2 flex flex-wrap items-center gap-3">
          <Button variant="secondary" busy={resend.isPending} disabled={resend.isSuccess} onClick={() => resend.mutate()}>
            {resend.isSuccess ? "Link sent again" : "Send the link again"}
          </Button>
          {resend.error ? <span className="text-rose-700">{describeError(resend.error)}</span> : null}
        </div>
      </Alert>
    </div>
  );
}

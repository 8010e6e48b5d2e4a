"use client";
import { useStatement } from "@/components/balance";
import { hasRole, type Me } from "@/components/session";
import { Alert, ButtonLink, Card, Loading } from "@/components/ui";
import { credits } from "@/lib/format";

/** What confirming the address brought this user: a consumer's starting credits, a producer's standing. */
export function Confirmed({ me, error }: { me: Me; error: string | null }) {
  const consumer = hasRole(me, "consumer");
  // The statement's read also grants the starting credits to a confirmed consumer who has none yet.
  const statement = useStatement(me.emailVerified && consumer);
  if (!me.emailVerified) {
    return (
      <Alert tone="warning" title={error ? "That link did not confirm your address" : "Your address is not confirmed yet"}>
        {error
          ? "The link has expired or was already used. Send yourself a new one with the button above, and follow it within 24 hours."
          : "Follow the link we mailed you to confirm it."}
      </Alert>
    );
  }
  const grant = statement.data?.lines.find((l) => l.kind === "grant" && (l.memo as { reason?: unknown } | null)?.reason === "starting credits");
  return (
    <Card>
      <div className="space-y-3 text-sm text-slate-700" data-testid="email-confirmed">
        <p className="text-base font-semibold text-slate-900">
          Your address <bdi>{me.email}</bdi> is confirmed.
        </p>
        {consumer ? (
          statement.isPending ? (
            <Loading label="Reading your balance…" />
          ) : grant ? (
            <p data-testid="granted">
              {credits(grant.amount)} of starting credits were added to your balance: enough to try the market with a few jobs.
            </p>
          ) : (
            <p data-testid="granted">No starting credits were added: the market gives none now (its admin sets the amount, and its reserve must cover it).</p>
          )
        ) : null}
        {hasRole(me, "producer") ? <p>As a producer, a confirmed address counts toward your standing, which lets the market trust your machines&apos; results sooner.</p> : null}
        <div className="flex flex-wrap gap-2 pt-2">
          {consumer ? <ButtonLink href="/jobs/new">Submit a job</ButtonLink> : null}
          {hasRole(me, "producer") ? (
            <ButtonLink href="/produce" variant={consumer ? "secondary" : "primary"}>
              Start producing
            </ButtonLink>
          ) : null}
          <ButtonLink href="/account/credits" variant="secondary">
            See your credits
          </ButtonLink>
        </div>
      </div>
    </Card>
  );
}

"use client";
import type { RouterOutputs } from "@/lib/trpc";
import { creditAmount, credits, dateTime } from "@/lib/format";
import { Card, Stat } from "@/components/ui";

type Job = RouterOutputs["jobs"]["get"];

/** What the job costs: quoted, held, charged, in a sentence a consumer can check. */
export function MoneyCard({ job }: { job: Job }) {
  return (
    <Card title="Money">
      <dl className="grid gap-3">
        <Stat label="Quoted price" value={credits(job.quotedPrice)} />
        <Stat label="Held in escrow" value={credits(job.escrowHeld)} testId="job-escrow-held" />
        <Stat label="Charged" value={credits(job.charged)} />
        {job.estimate ? <Stat label="Charge if it finished now" value={credits(job.estimate.chargeIfNow)} testId="job-charge-now" /> : null}
        {job.estimate ? <Stat label="Producers paid so far" value={credits(job.estimate.paidToProducers)} /> : null}
      </dl>
      <p className="mt-3 text-sm text-slate-700" data-testid={job.charged != null ? "job-charged" : "job-escrow"}>
        {chargeLine(job)}
      </p>
    </Card>
  );
}

function chargeLine(job: Job): string {
  const charged = job.charged;
  switch (job.status) {
    case "completed":
      if (charged == null) return "Completed; the charge is being settled.";
      if (charged < 0) return `The benefit was negative when the job completed, so the market paid you ${creditAmount(-charged)} credits.`;
      if (job.quotedPrice == null) return `Charged ${creditAmount(charged)} credits: the benefit at the time it completed.`;
      if (Math.abs(charged - job.quotedPrice) < 5e-7) return `Charged ${creditAmount(charged)} credits, the quoted price.`;
      return `Charged ${creditAmount(charged)} credits of a quoted ${creditAmount(job.quotedPrice)}: ${differenceWhy(job)}`;
    case "cancelled":
    case "failed": {
      const how = job.status === "cancelled" ? "Cancelled" : "Failed";
      return charged
        ? `${how}: charged ${creditAmount(charged)} credits, the piece rates of the work done for it; the rest of the escrow came back.`
        : `${how}: charged 0 credits; no work was paid for, so all of the escrow came back.`;
    }
    case "rejected":
      return "Nothing was charged: the market did not run this job.";
    case "delayed":
      return `Nothing is held yet: its escrow is taken when it is admitted.${job.givesUpAt ? ` If the market still cannot run it by ${dateTime(job.givesUpAt)}, it is given up and nothing is charged.` : ""}`;
    default:
      return (
        `${creditAmount(job.escrowHeld)} credits are held in escrow; producers are paid their piece rates from it as they finish tasks. ` +
        (job.quotedPrice != null && job.pricing === "posted"
          ? `You are charged the quoted ${creditAmount(job.quotedPrice)} credits (less if producers or the market make it late, more only if the tasks' measured work is over your estimate, and never past ${creditAmount(job.maxSpend ?? job.quotedPrice)}), and the rest comes back.`
          : "You are charged the benefit at the time it completes and the rest comes back.")
      );
  }
}

/** Why a completed job's charge differs from its quote, in one sentence (its settlement's reasons). */
function differenceWhy(job: Job): string {
  const codes = job.chargeReasons.map((r) => r.code);
  if (codes.includes("charged-measured-work")) return "the tasks' measured work was over your estimate, and the charge followed it.";
  if (codes.includes("lateness-relief")) return "it finished late, and the lateness producers or the market caused came off the charge.";
  if (codes.includes("charged-benefit")) return "the benefit at the time it completed.";
  return "see its settlement on your statement.";
}

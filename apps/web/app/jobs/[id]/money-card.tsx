"use client";
import type { RouterOutputs } from "@/lib/trpc";
import { creditAmount, credits } from "@/lib/format";
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
      return job.quotedPrice != null
        ? `Charged ${creditAmount(charged)} credits of a quoted ${creditAmount(job.quotedPrice)}.`
        : `Charged ${creditAmount(charged)} credits: the benefit at the time it completed.`;
    case "cancelled":
    case "failed": {
      const how = job.status === "cancelled" ? "Cancelled" : "Failed";
      return charged
        ? `${how}: charged ${creditAmount(charged)} credits, what producers had already been paid for its tasks; the rest of the escrow came back.`
        : `${how}: charged 0 credits; no producer had been paid for its tasks, so all of the escrow came back.`;
    }
    case "rejected":
      return "Nothing was charged: the market did not run this job.";
    case "delayed":
      return "Nothing is held yet: the job's highest benefit goes into escrow when it is admitted.";
    default:
      return `${creditAmount(job.escrowHeld)} credits, the job's highest benefit, are held in escrow; you are charged the benefit at the time it completes and the rest comes back.`;
  }
}

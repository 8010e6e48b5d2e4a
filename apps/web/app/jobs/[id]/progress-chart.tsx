"use client";
import Link from "next/link";
import { useEffect } from "react";
import { useQuery } from "@tanstack/react-query";
import { BenefitCurve } from "@cyclemarket/costbenefit";
import { useTRPC } from "@/lib/trpc";
import { describeError } from "@/lib/reasons";
import { BenefitChart } from "@/components/benefit-chart";
import { Card } from "@/components/ui";

/**
 * Tasks done over time against the job's benefit curve, over the job's own time, with the live
 * estimate of completion (the one the rest of the page shows), the quoted one and a near deadline marked.
 */
export function ProgressChart({ jobId, live, expectedAt, quotedAt }: { jobId: string; live: boolean; expectedAt: number | null; quotedAt: number | null }) {
  const trpc = useTRPC();
  const progress = useQuery({ ...trpc.jobs.progress.queryOptions({ jobId }), refetchInterval: live ? 2000 : false });
  // Read once more when the job ends, so the chart shows its last tasks and its completion.
  const { refetch } = progress;
  useEffect(() => {
    if (!live) void refetch();
  }, [live, refetch]);
  const curve = BenefitCurve.safeParse(progress.data?.benefit);
  const p = progress.data;
  const now = p && live ? (Date.now() - p.arrivedAt) / 1000 : (p?.completed ?? null);
  const after = (at: number | null) => (p && at != null ? (at - p.arrivedAt) / 1000 : null);
  return (
    <Card
      title="Progress over time"
      actions={
        <Link href={`/jobs/${jobId}/decisions`} className="text-sm font-medium text-indigo-700 underline-offset-2 hover:underline">
          The market&apos;s decisions about this job
        </Link>
      }
    >
      {progress.isError ? (
        <p className="text-sm text-rose-700">{describeError(progress.error)}</p>
      ) : p && curve.success ? (
        <BenefitChart
          curve={curve.data}
          doneAt={p.doneAt}
          taskCount={p.taskCount}
          expected={live ? after(expectedAt) : null}
          quoted={after(quotedAt)}
          now={now}
          label="Tasks done over time against the benefit curve"
          testId="job-progress-chart"
        />
      ) : (
        <p className="text-sm text-slate-600">…</p>
      )}
    </Card>
  );
}

"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { BenefitCurve } from "@cyclemarket/costbenefit";
import { useTRPC } from "@/lib/trpc";
import { describeError } from "@/lib/reasons";
import { BenefitChart } from "@/components/benefit-chart";
import { Card } from "@/components/ui";

/** Tasks done over time against the job's benefit curve, with its deadline and expected completion marked. */
export function ProgressChart({ jobId, live }: { jobId: string; live: boolean }) {
  const trpc = useTRPC();
  const progress = useQuery({ ...trpc.jobs.progress.queryOptions({ jobId }), refetchInterval: live ? 2000 : false });
  const curve = BenefitCurve.safeParse(progress.data?.benefit);
  const p = progress.data;
  const now = p && live ? (Date.now() - p.arrivedAt) / 1000 : (p?.completed ?? null);
  return (
    <Card
      title="Progress over time"
      actions={
        <Link href={`/jobs/${jobId}/decisions`} className="text-sm font-medium text-indigo-600 hover:underline">
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
          expectedCompletion={p.expectedCompletion}
          now={now}
          label="Tasks done over time against the benefit curve"
          testId="job-progress-chart"
        />
      ) : (
        <p className="text-sm text-slate-500">…</p>
      )}
    </Card>
  );
}

"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { credits, dateTime } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { RequireRole } from "@/components/session";
import { Alert, Badge, ButtonLink, Card, EmptyState, Loading, PageHeader, ProgressBar } from "@/components/ui";

const UNFINISHED = new Set(["admitted", "running", "delayed"]);

function JobList() {
  const trpc = useTRPC();
  const jobs = useQuery({
    ...trpc.jobs.list.queryOptions(),
    refetchInterval: (q) => (q.state.data?.some((j) => UNFINISHED.has(j.status)) ? 2000 : 10_000),
  });
  if (jobs.isPending) return <Loading label="Loading your jobs…" />;
  if (jobs.isError) return <Alert tone="error" title="Your jobs could not be loaded">{describeError(jobs.error)}</Alert>;
  if (jobs.data.length === 0) {
    return (
      <EmptyState title="No jobs yet">
        <p>Submit a job and the market decides whether and where to run it.</p>
        <div className="mt-4">
          <ButtonLink href="/jobs/new">Submit your first job</ButtonLink>
        </div>
      </EmptyState>
    );
  }
  return (
    <Card className="overflow-x-auto p-0">
      <table className="min-w-full text-sm">
        <thead className="border-b border-slate-200 bg-slate-50 text-left text-xs font-medium uppercase tracking-wide text-slate-500">
          <tr>
            <th scope="col" className="px-4 py-3">Job</th>
            <th scope="col" className="px-4 py-3">Status</th>
            <th scope="col" className="px-4 py-3">Progress</th>
            <th scope="col" className="px-4 py-3 text-right">Price</th>
            <th scope="col" className="px-4 py-3">Submitted</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {jobs.data.map((j) => (
            <tr key={j.id} className="hover:bg-slate-50">
              <td className="px-4 py-3">
                <Link href={`/jobs/${j.id}`} className="font-medium text-indigo-600 hover:underline">
                  <bdi>{j.name}</bdi>
                </Link>
                <div className="text-xs text-slate-500">{j.example ?? "uploaded module"}</div>
              </td>
              <td className="px-4 py-3">
                <Badge value={j.status} />
              </td>
              <td className="w-56 px-4 py-3">
                <ProgressBar value={j.tasksDone} max={j.taskCount} label={`Progress of ${j.name}`} />
                <div className="mt-1 text-xs text-slate-500">
                  {j.tasksDone} of {j.taskCount} tasks
                </div>
              </td>
              <td className="px-4 py-3 text-right tabular-nums">
                {j.charged != null ? (
                  <span title="Charged">{credits(j.charged)}</span>
                ) : j.quotedPrice != null ? (
                  <span title="Quoted" className="text-slate-600">
                    {credits(j.quotedPrice)} <span className="text-xs text-slate-400">quoted</span>
                  </span>
                ) : (
                  "—"
                )}
              </td>
              <td className="px-4 py-3 text-slate-600">{dateTime(j.submittedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}

export default function JobsPage() {
  return (
    <>
      <PageHeader title="My jobs" description="Every job you submitted, with the market's decision and its progress." actions={<ButtonLink href="/jobs/new">New job</ButtonLink>} />
      <RequireRole role="consumer" what="see your jobs">
        {() => <JobList />}
      </RequireRole>
    </>
  );
}

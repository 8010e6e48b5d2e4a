"use client";
import { Suspense, useState } from "react";
import { useSearchParams } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { RequireRole } from "@/components/session";
import { Alert, Loading, PageHeader, cx } from "@/components/ui";
import { useTRPC } from "@/lib/trpc";
import { describeError } from "@/lib/reasons";
import { NewJobForm } from "./new-job-form";
import { JobFileForm } from "./job-file-form";

export default function NewJobPage() {
  return (
    <>
      <PageHeader
        title="New job"
        description="Pick a ready-made program or upload your own WASI module, say what finishing sooner is worth to you, and ask the market. A job file says all of that in one JSON file, for jobs of many tasks."
      />
      <RequireRole role="consumer" what="submit jobs">
        {() => (
          <Suspense fallback={<Loading label="Loading…" />}>
            <NewJobTabs />
          </Suspense>
        )}
      </RequireRole>
    </>
  );
}

/** `?again=JOBID` ("Run again" on a job's page) opens the job-file tab with that job's job file. */
function NewJobTabs() {
  const again = useSearchParams().get("again");
  const [form, setForm] = useState<"simple" | "file">(again ? "file" : "simple");
  return (
    <>
      <div role="tablist" aria-label="How to describe the job" className="mb-4 inline-flex rounded-lg bg-slate-100 p-1">
        {(
          [
            ["simple", "Fill in the form"],
            ["file", "Use a job file"],
          ] as const
        ).map(([value, label]) => (
          <button
            key={value}
            role="tab"
            aria-selected={form === value}
            onClick={() => setForm(value)}
            className={cx("rounded-md px-3 py-1.5 text-sm font-medium", form === value ? "bg-white text-slate-900 shadow-sm" : "text-slate-600 hover:text-slate-900")}
          >
            {label}
          </button>
        ))}
      </div>
      {form === "simple" ? <NewJobForm /> : again ? <RunAgain jobId={again} /> : <JobFileForm />}
    </>
  );
}

function RunAgain({ jobId }: { jobId: string }) {
  const trpc = useTRPC();
  const file = useQuery(trpc.jobs.jobFile.queryOptions({ jobId }, { staleTime: Infinity }));
  if (file.isPending) return <Loading label="Reading the job's job file…" />;
  if (file.isError) return <Alert tone="error" title="That job cannot be run again">{describeError(file.error)}</Alert>;
  return <JobFileForm initial={JSON.stringify(file.data, null, 2)} />;
}

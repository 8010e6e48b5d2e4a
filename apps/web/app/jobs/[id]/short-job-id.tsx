"use client";
import Link from "next/link";
import { useEffect, type ReactNode } from "react";
import { useRouter } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { SHORT_ID_LENGTH, shortId } from "@cyclemarket/client/job-file";
import { useTRPC } from "@/lib/trpc";
import { describeError } from "@/lib/reasons";
import { Alert, Loading, PageHeader } from "@/components/ui";

/** A job's short id (what pages, statements and the log show), as someone may type it into the address. */
export const isShortJobId = (id: string) => new RegExp(`^[0-9a-f]{${SHORT_ID_LENGTH}}$`, "i").test(id);

/** A job's whole id: a UUID. */
export const isJobId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

/** The job page when it shows no job: why, in words, and the way back to the list. */
export function NoJob({ tone, title, children }: { tone: "warning" | "error"; title: string; children: ReactNode }) {
  return (
    <>
      <PageHeader title="Job" />
      <Alert tone={tone} title={title}>
        {children}
        <div className="mt-3">
          <Link href="/jobs" className="font-medium underline">
            Back to my jobs
          </Link>
        </div>
      </Alert>
    </>
  );
}

/** An address that names no job at all (mistyped, cut short): said in words, not as the API's input error. */
export function NotAJobId({ id }: { id: string }) {
  return (
    <NoJob tone="warning" title="No such job">
      {id} is not a job&apos;s id: the address takes a job&apos;s whole id, or its short id (its last {SHORT_ID_LENGTH} characters).
    </NoJob>
  );
}

/** Opens the caller's job whose short id this is, as the CLI accepts it; says so when none or several are. */
export function ShortJobId({ shortId: target }: { shortId: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const jobs = useQuery(trpc.jobs.list.queryOptions());
  const matches = jobs.data?.filter((j) => shortId(j.id) === target.toLowerCase()) ?? [];
  const only = matches.length === 1 ? matches[0]!.id : null;
  useEffect(() => {
    if (only) router.replace(`/jobs/${only}`);
  }, [only, router]);

  if (jobs.isPending || only) return <Loading label="Finding the job…" />;
  return (
    <NoJob tone={jobs.isError ? "error" : "warning"} title={jobs.isError ? "Your jobs could not be loaded" : "No such job"}>
      {jobs.isError
        ? describeError(jobs.error)
        : matches.length
          ? `${target} is the short id of ${matches.length} of your jobs; open the one you mean from your list.`
          : `None of your latest jobs has the short id ${target}.`}
    </NoJob>
  );
}

"use client";
import Link from "next/link";
import { useParams } from "next/navigation";
import { RequireRole } from "@/components/session";
import { PageHeader } from "@/components/ui";
import { DecisionLog } from "@/components/decision-log";

/** One job's entries in the market's decision log, for its owner. */
export default function JobDecisionsPage() {
  const { id } = useParams<{ id: string }>();
  return (
    <>
      <PageHeader
        title="The market's decisions about this job"
        description={
          <>
            Its admission (or delay or rejection), where its tasks were placed and moved, newest first.{" "}
            <Link href={`/jobs/${id}`} className="text-indigo-700 underline underline-offset-2">
              Back to the job
            </Link>
          </>
        }
      />
      <RequireRole what="see this job">{() => <DecisionLog jobId={id} initial={{}} />}</RequireRole>
    </>
  );
}

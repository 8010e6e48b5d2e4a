"use client";
import { useParams } from "next/navigation";
import { RequireRole } from "@/components/session";
import { JobView } from "./job-view";
import { NotAJobId, ShortJobId, isJobId, isShortJobId } from "./short-job-id";

export default function JobPage() {
  const { id } = useParams<{ id: string }>();
  return (
    <RequireRole what="see this job">
      {() => (isJobId(id) ? <JobView jobId={id} /> : isShortJobId(id) ? <ShortJobId shortId={id} /> : <NotAJobId id={id} />)}
    </RequireRole>
  );
}

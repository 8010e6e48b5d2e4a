"use client";
import { useParams } from "next/navigation";
import { RequireRole } from "@/components/session";
import { JobView } from "./job-view";

export default function JobPage() {
  const { id } = useParams<{ id: string }>();
  return (
    <RequireRole what="see this job">
      {() => <JobView jobId={id} />}
    </RequireRole>
  );
}

"use client";
import { RequireRole } from "@/components/session";
import { PageHeader } from "@/components/ui";
import { NewJobForm } from "./new-job-form";

export default function NewJobPage() {
  return (
    <>
      <PageHeader
        title="New job"
        description="Pick a ready-made program or upload your own WASI module, say what finishing sooner is worth to you, and ask the market."
      />
      <RequireRole role="consumer" what="submit jobs">
        {() => <NewJobForm />}
      </RequireRole>
    </>
  );
}

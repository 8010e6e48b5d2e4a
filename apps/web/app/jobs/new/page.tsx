"use client";
import { useState } from "react";
import { RequireRole } from "@/components/session";
import { PageHeader, cx } from "@/components/ui";
import { NewJobForm } from "./new-job-form";
import { JobFileForm } from "./job-file-form";

export default function NewJobPage() {
  const [form, setForm] = useState<"simple" | "file">("simple");
  return (
    <>
      <PageHeader
        title="New job"
        description="Pick a ready-made program or upload your own WASI module, say what finishing sooner is worth to you, and ask the market. A job file says all of that in one JSON file, for jobs of many tasks."
      />
      <RequireRole role="consumer" what="submit jobs">
        {() => (
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
            {form === "simple" ? <NewJobForm /> : <JobFileForm />}
          </>
        )}
      </RequireRole>
    </>
  );
}

"use client";
import { Suspense } from "react";
import { useSearchParams } from "next/navigation";
import Link from "next/link";
import { RequireRole } from "@/components/session";
import { PageHeader, Loading } from "@/components/ui";
import { DecisionLog, OUTCOMES, type DecisionFilters } from "@/components/decision-log";

/** Filters from the address (`?job=…&machine=…&user=…&outcome=…`), so a job page can link here. */
function FromAddress() {
  const params = useSearchParams();
  const outcome = OUTCOMES.find((o) => o.value === params.get("outcome"))?.value;
  const initial: DecisionFilters = {
    jobId: params.get("job") ?? undefined,
    machineId: params.get("machine") ?? undefined,
    user: params.get("user") ?? undefined,
    outcome,
  };
  return <DecisionLog key={params.toString()} initial={initial} />;
}

export default function DecisionsPage() {
  return (
    <>
      <PageHeader
        title="Decision log"
        description={
          <>
            Every admission, delay, rejection, placement, move and departure the market applied, newest first, with its reasons.{" "}
            <Link href="/admin" className="text-indigo-700 underline underline-offset-2">
              Back to the dashboard
            </Link>
          </>
        }
      />
      <RequireRole role="admin" what="read the decision log">
        {() => (
          <Suspense fallback={<Loading />}>
            <FromAddress />
          </Suspense>
        )}
      </RequireRole>
    </>
  );
}

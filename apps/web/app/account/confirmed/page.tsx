"use client";
import { Suspense, type ReactNode } from "react";
import { useSearchParams } from "next/navigation";
import { RequireRole } from "@/components/session";
import { Loading, PageHeader } from "@/components/ui";
import { Confirmed } from "./confirmed";

/**
 * Where the link mailed at sign-up lands (its callback): that the address is confirmed and what
 * confirming granted, or why the link did not work (`?error=`, from the verification route).
 */
export default function ConfirmedPage() {
  return (
    <>
      <PageHeader title="Email address" />
      <RequireRole what="confirm your email address">
        {(me) => (
          <Suspense fallback={<Loading />}>
            <WithError>{(error) => <Confirmed me={me} error={error} />}</WithError>
          </Suspense>
        )}
      </RequireRole>
    </>
  );
}

function WithError({ children }: { children: (error: string | null) => ReactNode }) {
  return <>{children(useSearchParams().get("error"))}</>;
}

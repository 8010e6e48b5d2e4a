"use client";
import { Alert, Button } from "@/components/ui";

/** A page that broke shows what happened and a way to try again, inside the usual layout. */
export default function PageError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="mx-auto max-w-xl space-y-4 py-10">
      <Alert tone="error" title="This page ran into a problem">
        {error.message || "Something went wrong while showing this page."}
      </Alert>
      <Button variant="secondary" onClick={reset}>
        Try again
      </Button>
    </div>
  );
}

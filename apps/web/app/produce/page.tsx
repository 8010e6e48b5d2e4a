"use client";
import { RequireRole } from "@/components/session";
import { PageHeader } from "@/components/ui";
import { ProducerPanel } from "./producer-panel";

export default function ProducePage() {
  return (
    <>
      <PageHeader
        title="Produce"
        description="Sell this browser's idle cycles: while this tab is open it runs tasks for the market in the background and earns credits."
      />
      <RequireRole role="producer" what="sell your cycles">
        {() => <ProducerPanel />}
      </RequireRole>
    </>
  );
}

"use client";
import { RequireRole } from "@/components/session";
import { ButtonLink, PageHeader } from "@/components/ui";
import { CreditsPanel } from "./credits-panel";

export default function CreditsPage() {
  return (
    <>
      <PageHeader
        title="Credits"
        description="Your balance as a consumer, what you have earned as a producer, and every movement on your accounts."
        actions={<ButtonLink href="/account" variant="secondary">Account</ButtonLink>}
      />
      <RequireRole what="see your credits">{() => <CreditsPanel />}</RequireRole>
    </>
  );
}

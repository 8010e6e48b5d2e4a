"use client";
import { RequireRole } from "@/components/session";
import { PageHeader } from "@/components/ui";
import { AccountPanel } from "./account-panel";

export default function AccountPage() {
  return (
    <>
      <PageHeader title="Account" description="Your credits, your roles in the market, and API tokens for Node workers and scripts." />
      <RequireRole what="manage your account">{(me) => <AccountPanel me={me} />}</RequireRole>
    </>
  );
}

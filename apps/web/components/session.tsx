"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";
import type { ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/lib/trpc";
import { describeError } from "@/lib/reasons";
import { Alert, ButtonLink, Card, Loading } from "./ui";

export type Me = NonNullable<RouterOutputs["account"]["me"]>;
export type Role = Me["roles"][number];

/** The signed-in user, or null; undefined while it loads. */
export function useMe() {
  const trpc = useTRPC();
  return useQuery(trpc.account.me.queryOptions(undefined, { staleTime: 30_000 }));
}

export function hasRole(me: Me, role: Role): boolean {
  return me.roles.includes(role) || me.roles.includes("admin");
}

const ROLE_WORDS: Record<Role, string> = { producer: "producer", consumer: "consumer", admin: "admin" };

/**
 * Renders its children only for a signed-in user with the role; otherwise a sign-in prompt or
 * a clear "you need the X role" message, never a broken page.
 */
export function RequireRole({ role, what, children }: { role?: Role; what: string; children: (me: Me) => ReactNode }) {
  const me = useMe();
  const pathname = usePathname();
  if (me.isPending) return <Loading label="Checking your session…" />;
  if (me.isError) return <Alert tone="error" title="Could not check your session">{describeError(me.error)}</Alert>;
  if (!me.data) {
    return (
      <Card>
        <div className="flex flex-col items-start gap-3">
          <h2 className="text-base font-semibold text-slate-900">Sign in to {what}</h2>
          <p className="text-sm text-slate-600">You need an account in the market for this page.</p>
          <div className="flex gap-2">
            <ButtonLink href={`/signin?next=${encodeURIComponent(pathname)}`}>Sign in</ButtonLink>
            <ButtonLink href={`/signup?next=${encodeURIComponent(pathname)}`} variant="secondary">
              Create an account
            </ButtonLink>
          </div>
        </div>
      </Card>
    );
  }
  if (role && !hasRole(me.data, role)) {
    return (
      <Alert tone="warning" title={`You need the ${ROLE_WORDS[role]} role`}>
        {role === "admin" ? (
          "Only market admins can see this page."
        ) : (
          <>
            Your account does not have the {ROLE_WORDS[role]} role yet. Add it on{" "}
            <Link href="/account" className="font-medium underline">
              your account page
            </Link>{" "}
            to {what}.
          </>
        )}
      </Alert>
    );
  }
  return <>{children(me.data)}</>;
}

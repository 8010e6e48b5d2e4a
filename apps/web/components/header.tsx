"use client";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { authClient } from "@/lib/auth-client";
import { cx } from "./ui";
import { useMe } from "./session";
import { HeaderBalance } from "./balance";

const NAV = [
  { href: "/produce", label: "Produce" },
  { href: "/jobs", label: "My jobs" },
  { href: "/jobs/new", label: "New job" },
  { href: "/account", label: "Account" },
] as const;

export function Header() {
  const pathname = usePathname();
  const router = useRouter();
  const queryClient = useQueryClient();
  const me = useMe();
  const [signingOut, setSigningOut] = useState(false);

  const isActive = (href: string) => (href === "/jobs" ? pathname === "/jobs" || /^\/jobs\/(?!new)/.test(pathname) : pathname.startsWith(href));
  const links = me.data?.roles.includes("admin") ? [...NAV, { href: "/admin", label: "Admin" }] : NAV;

  async function signOut() {
    setSigningOut(true);
    try {
      await authClient.signOut();
    } finally {
      queryClient.clear();
      setSigningOut(false);
      router.push("/");
    }
  }

  return (
    <header className="border-b border-slate-200 bg-white/90 backdrop-blur">
      <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-6 gap-y-2 px-6 py-3">
        <Link href="/" className="flex items-center gap-2 text-base font-semibold text-slate-900">
          <span aria-hidden="true" className="grid h-7 w-7 place-items-center rounded-md bg-indigo-600 text-xs font-bold text-white">
            CM
          </span>
          Cycle Market
        </Link>
        <nav aria-label="Main" className="flex flex-1 flex-wrap gap-1">
          {links.map((l) => (
            <Link
              key={l.href}
              href={l.href}
              aria-current={isActive(l.href) ? "page" : undefined}
              className={cx(
                "rounded-md px-3 py-1.5 text-sm font-medium",
                isActive(l.href) ? "bg-indigo-50 text-indigo-700" : "text-slate-600 hover:bg-slate-100 hover:text-slate-900",
              )}
            >
              {l.label}
            </Link>
          ))}
        </nav>
        <div className="flex items-center gap-3 text-sm">
          {me.isPending ? (
            <span className="text-slate-400">…</span>
          ) : me.data ? (
            <>
              <span className="text-slate-600" data-testid="signed-in-user" title={`Roles: ${me.data.roles.join(", ")}`}>
                Signed in as <bdi className="font-medium text-slate-900">{me.data.name || me.data.email}</bdi>
                <span className="ml-1 hidden text-xs text-slate-400 2xl:inline">({me.data.roles.join(", ")})</span>
              </span>
              <HeaderBalance />
              <button type="button" onClick={signOut} disabled={signingOut} className="rounded-md px-3 py-1.5 font-medium text-slate-700 hover:bg-slate-100">
                Sign out
              </button>
            </>
          ) : (
            <>
              <Link href="/signin" className="rounded-md px-3 py-1.5 font-medium text-slate-700 hover:bg-slate-100">
                Sign in
              </Link>
              <Link href="/signup" className="rounded-md bg-indigo-600 px-3 py-1.5 font-medium text-white hover:bg-indigo-500">
                Sign up
              </Link>
            </>
          )}
        </div>
      </div>
    </header>
  );
}

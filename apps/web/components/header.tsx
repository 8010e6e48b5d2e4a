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

  // Two lines at most on a phone: the name of the market and the user's part on the first, the
  // pages on the second (scrolling sideways if they ever outgrow it); one line where it fits. No
  // item wraps inside itself.
  return (
    <header className="border-b border-slate-200 bg-white/90 backdrop-blur">
      <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-4 gap-y-1 whitespace-nowrap px-4 py-2 sm:gap-x-6 sm:px-6 sm:py-3">
        <Link href="/" className="order-1 flex items-center gap-2 text-base font-semibold text-slate-900">
          <span aria-hidden="true" className="grid h-7 w-7 place-items-center rounded-md bg-indigo-600 text-xs font-bold text-white">
            CM
          </span>
          <span className="sr-only sm:not-sr-only">Cycle Market</span>
        </Link>
        <nav aria-label="Main" className="order-3 -mx-2 flex w-full gap-0.5 overflow-x-auto px-2 sm:order-2 sm:mx-0 sm:w-auto sm:flex-1 sm:gap-1 sm:px-0">
          {links.map((l) => (
            <Link
              key={l.href}
              href={l.href}
              aria-current={isActive(l.href) ? "page" : undefined}
              className={cx(
                "shrink-0 rounded-md px-2 py-1.5 text-sm font-medium sm:px-3",
                isActive(l.href) ? "bg-indigo-50 text-indigo-700" : "text-slate-600 hover:bg-slate-100 hover:text-slate-900",
              )}
            >
              {l.label}
            </Link>
          ))}
        </nav>
        <div className="order-2 ml-auto flex min-w-0 items-center gap-2 text-sm sm:order-3 sm:gap-3">
          {me.isPending ? (
            <span className="text-slate-400">…</span>
          ) : me.data ? (
            <>
              <span className="flex min-w-0 items-baseline gap-1 text-slate-600" data-testid="signed-in-user" title={`Signed in as ${me.data.name || me.data.email}; roles: ${me.data.roles.join(", ")}`}>
                <span className="sr-only md:not-sr-only">Signed in as</span>
                <bdi className="max-w-[7rem] truncate font-medium text-slate-900 sm:max-w-[12rem]">{me.data.name || me.data.email}</bdi>
                <span className="ml-1 hidden text-xs text-slate-400 2xl:inline">({me.data.roles.join(", ")})</span>
              </span>
              <HeaderBalance />
              <button type="button" onClick={signOut} disabled={signingOut} className="rounded-md px-2 py-1.5 font-medium text-slate-700 hover:bg-slate-100 sm:px-3">
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

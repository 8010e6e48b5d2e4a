"use client";
// The one place every page says the market is away: while any query is failing for want of an
// answer (isOutage), or a mutation just did, a banner says "reconnecting..." with how long it
// has been trying. Queries keep their data and retry by themselves (lib/providers.tsx); the
// banner also asks the market itself every few seconds, so it clears as soon as the market is
// back even on a page that has stopped asking.
import { useEffect, useState } from "react";
import { useQueryClient, type QueryClient } from "@tanstack/react-query";
import { isOutage } from "@/lib/outage";
import { seconds } from "@/lib/format";
import { Spinner } from "./ui";

const PROBE_MS = 2_000;
/** Something cheap that needs the Market Manager and its database: the session's own user. */
const PROBE_URL = "/api/trpc/account.me";

function failingNow(client: QueryClient): boolean {
  return client
    .getQueryCache()
    .getAll()
    .some((q) => q.state.fetchFailureCount > 0 && q.state.fetchStatus !== "idle" && isOutage(q.state.fetchFailureReason));
}

/** Whether the market is away and since when (ms), from the query and mutation caches and a probe. */
export function useMarketConnection(): { awaySince: number | null } {
  const client = useQueryClient();
  const [awaySince, setAwaySince] = useState<number | null>(null);

  useEffect(() => {
    const update = (away: boolean) => setAwaySince((since) => (away ? (since ?? Date.now()) : null));
    const offQueries = client.getQueryCache().subscribe((event) => {
      if (event.type !== "updated") return;
      const action = event.action.type;
      if (action === "failed" && isOutage(event.query.state.fetchFailureReason)) update(true);
      else if (action === "success") update(failingNow(client));
    });
    const offMutations = client.getMutationCache().subscribe((event) => {
      if (event.type === "updated" && event.action.type === "error" && isOutage(event.action.error)) update(true);
    });
    return () => {
      offQueries();
      offMutations();
    };
  }, [client]);

  // While away, ask the market directly; once it answers, every query is asked again at once.
  useEffect(() => {
    if (awaySince === null) return;
    let stopped = false;
    const timer = setInterval(() => {
      fetch(PROBE_URL, { cache: "no-store" })
        .then((res) => {
          if (stopped || !res.ok) return;
          setAwaySince(null);
          void client.refetchQueries({ type: "active" });
        })
        .catch(() => {});
    }, PROBE_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [awaySince, client]);

  return { awaySince };
}

/** "12 s", "3.5 min": how long the page has been trying. */
export const awayFor = (ms: number) => (ms < 120_000 ? `${Math.max(0, Math.floor(ms / 1000))} s` : seconds(ms / 1000));

export function ConnectionBanner() {
  const { awaySince } = useMarketConnection();
  const [, tick] = useState(0);
  useEffect(() => {
    if (awaySince === null) return;
    const timer = setInterval(() => tick((n) => n + 1), 1_000);
    return () => clearInterval(timer);
  }, [awaySince]);
  if (awaySince === null) return null;
  return (
    <div role="status" aria-live="polite" data-testid="connection-banner" className="sticky top-0 z-50 border-b border-amber-300 bg-amber-50 px-6 py-2 text-sm text-amber-900">
      <div className="mx-auto flex max-w-6xl items-center gap-2">
        <Spinner />
        <span>
          <strong>Reconnecting to the market…</strong> trying for <span data-testid="connection-away-for">{awayFor(Date.now() - awaySince)}</span>. What you see
          is as of {new Date(awaySince).toLocaleTimeString()}; it updates by itself once the market answers.
        </span>
      </div>
    </div>
  );
}

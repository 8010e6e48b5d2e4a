"use client";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { credits, number } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { Card, Stat } from "@/components/ui";

const REFRESH_MS = 30_000;

/**
 * What this producer earned per hour over the last day (all its machines), and how much of what
 * consumers paid for the jobs it worked on reached it.
 */
export function EarningsCard() {
  const trpc = useTRPC();
  const earnings = useQuery({ ...trpc.ledger.earnings.queryOptions(), refetchInterval: REFRESH_MS });
  if (earnings.isError) return <Card title="Earnings">{describeError(earnings.error)}</Card>;
  const e = earnings.data;
  const peak = Math.max(0, ...(e?.hourly ?? []).map((h) => h.earned));
  const share = e && e.chargedForTheirWork > 0 ? e.paidForThatWork / e.chargedForTheirWork : null;
  return (
    <Card title="Earnings">
      <dl className="grid grid-cols-2 gap-3">
        <Stat label="Last hour" value={e ? credits(e.earnedLastHour) : "…"} testId="earned-last-hour" />
        <Stat label="Last 24 hours" value={e ? credits(e.earnedLastDay) : "…"} testId="earned-last-day" />
      </dl>
      {e && e.hourly.length > 0 ? (
        <ol className="mt-4 flex h-16 items-end gap-0.5" aria-label="Earned per hour, last 24 hours">
          {e.hourly.map((h) => (
            <li
              key={h.hour}
              title={`${new Date(h.hour).toLocaleTimeString("en-US", { hour: "2-digit", minute: "2-digit" })}: ${credits(h.earned)}`}
              className="w-2 rounded-t bg-emerald-500"
              style={{ height: `${peak > 0 ? Math.max(4, (h.earned / peak) * 100) : 4}%` }}
            />
          ))}
        </ol>
      ) : null}
      <p className="mt-3 text-xs text-slate-600" data-testid="earned-share">
        {e && share !== null
          ? `Consumers were charged ${credits(e.chargedForTheirWork)} for the part of their jobs your machines ran; you were paid ${credits(e.paidForThatWork)} of it (${number(share * 100, 0)}%). The rest is the market's congestion charge and fee.`
          : "Once jobs you worked on are settled, this shows what consumers paid for your part of them and how much of it reached you."}
      </p>
    </Card>
  );
}

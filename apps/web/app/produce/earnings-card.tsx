"use client";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { credits, number } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { Card, Stat } from "@/components/ui";
import { EarningsChart } from "@/components/earnings-chart";

const REFRESH_MS = 30_000;

/**
 * What this producer earned per hour and per day (all its machines, as a chart), and how much of what
 * consumers paid for the jobs it worked on reached it.
 */
export function EarningsCard() {
  const trpc = useTRPC();
  const earnings = useQuery({ ...trpc.ledger.earnings.queryOptions(), refetchInterval: REFRESH_MS });
  if (earnings.isError) return <Card title="Earnings">{describeError(earnings.error)}</Card>;
  const e = earnings.data;
  const share = e && e.chargedForTheirWork > 0 ? e.paidForThatWork / e.chargedForTheirWork : null;
  return (
    <Card title="Earnings">
      <dl className="grid grid-cols-2 gap-3">
        <Stat label="Last hour" value={e ? credits(e.earnedLastHour) : "…"} testId="earned-last-hour" />
        <Stat label="Last 24 hours" value={e ? credits(e.earnedLastDay) : "…"} testId="earned-last-day" />
      </dl>
      <EarningsChart />
      <p className="mt-3 text-xs text-slate-600" data-testid="earned-share">
        {e && share !== null
          ? `On the last jobs you worked on that were settled, consumers were charged ${credits(e.chargedForTheirWork)} for the part your machines ran; you were paid ${credits(e.paidForThatWork)} of it (${number(share * 100, 0)}%). The rest is the market's congestion charge and fee.`
          : "Once jobs you worked on are settled, this shows what consumers paid for your part of them and how much of it reached you."}
      </p>
    </Card>
  );
}

"use client";
import { useEffect, useRef } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { credits } from "@/lib/format";
import { earnedShareWords } from "@/lib/statement";
import { describeError } from "@/lib/reasons";
import { Card, Stat } from "@/components/ui";
import { EarningsChart } from "@/components/earnings-chart";

const REFRESH_MS = 10_000;
/** Reads after accepted results at most this often: a fast producer has several paid a second. */
const AFTER_PAYMENT_MS = 2_000;

/**
 * The producer's balance and what it earned in the last hour and day, read in one statement so
 * the figures on the page agree with each other (ledger.earnings); shared by the status card's
 * "Earned" and the Earnings card, one query.
 */
export function useEarnings() {
  const trpc = useTRPC();
  return useQuery({ ...trpc.ledger.earnings.queryOptions(), refetchInterval: REFRESH_MS });
}

/** After results were accepted (paid), the earnings, their chart and the header's balance are read again, at most every 2 s. */
export function useReadAfterPayments(accepted: number) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const last = useRef(0);
  useEffect(() => {
    if (accepted === 0) return;
    const timer = setTimeout(
      () => {
        last.current = Date.now();
        for (const key of [trpc.ledger.earnings.queryKey(), trpc.ledger.earningsSeries.queryKey(), trpc.ledger.balance.queryKey()]) void queryClient.invalidateQueries({ queryKey: key });
      },
      Math.max(0, last.current + AFTER_PAYMENT_MS - Date.now()),
    );
    return () => clearTimeout(timer);
  }, [accepted, queryClient, trpc]);
}

/**
 * What this producer earned per hour and per day (all its machines, as a chart), and how much of what
 * consumers paid for the jobs it worked on reached it.
 */
export function EarningsCard() {
  const earnings = useEarnings();
  if (earnings.isError) return <Card title="Earnings">{describeError(earnings.error)}</Card>;
  const e = earnings.data;
  return (
    <Card title="Earnings">
      <dl className="grid grid-cols-2 gap-3">
        <Stat label="Last hour" value={e ? credits(e.earnedLastHour) : "…"} testId="earned-last-hour" />
        <Stat label="Last 24 hours" value={e ? credits(e.earnedLastDay) : "…"} testId="earned-last-day" />
      </dl>
      <EarningsChart />
      <p className="mt-3 text-xs text-slate-600" data-testid="earned-share">
        {e && e.chargedForTheirWork > 0
          ? earnedShareWords(e.chargedForTheirWork, e.paidForThatWork)
          : "Once jobs you worked on are settled, this shows what consumers paid for your part of them and how much of it reached you."}
      </p>
    </Card>
  );
}

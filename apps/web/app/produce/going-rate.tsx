"use client";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { credits, number } from "@/lib/format";

const REFRESH_MS = 30_000;

/**
 * The going rate beside the price field: what other producers' machines ask (of a speed like
 * this tab's once its benchmark has run) and what such a machine earned in the last hour.
 */
export function GoingRate({ speed }: { speed: number | null }) {
  const trpc = useTRPC();
  const rate = useQuery({ ...trpc.machines.goingRate.queryOptions({ speed }), refetchInterval: REFRESH_MS, placeholderData: (p) => p });
  const r = rate.data;
  return (
    <div className="rounded-lg bg-slate-50 px-3 py-2 text-xs text-slate-700" data-testid="going-rate" aria-live="polite">
      <p className="font-medium text-slate-900">Going rate</p>
      {rate.isError ? (
        <p>Not available right now.</p>
      ) : !r ? (
        <p>…</p>
      ) : !r.ask ? (
        <p>No other producer&apos;s machine is in the market now, so there is no going rate: any price is a first offer.</p>
      ) : (
        <>
          <p>
            {r.similar && r.speedRange
              ? `${r.machines} machine${r.machines === 1 ? "" : "s"} of a speed like this tab's (${number(r.speedRange[0], 2)}× to ${number(r.speedRange[1], 2)}×)`
              : `${r.machines} machine${r.machines === 1 ? "" : "s"} of other producers`}{" "}
            {r.machines === 1 ? `asks ${credits(r.ask.median)} a second.` : `ask ${credits(r.ask.median)} a second (median; ${credits(r.ask.low)} to ${credits(r.ask.high)}).`}
          </p>
          <p className="mt-1">
            {r.earnedLastHour
              ? r.machines === 1
                ? `In the last hour it earned ${credits(r.earnedLastHour.median)}.`
                : `In the last hour such a machine earned ${credits(r.earnedLastHour.median)} (median; the most ${credits(r.earnedLastHour.high)}).`
              : "What they earned in the last hour is not known yet."}{" "}
            A lower price wins more tasks when the market is busy; the market pays nothing for time a task does not run.
          </p>
        </>
      )}
    </div>
  );
}

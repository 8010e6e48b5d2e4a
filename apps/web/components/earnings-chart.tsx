"use client";
import { useMemo, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { credits } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { Chart, bars, type ChartData, type ChartOptions } from "./chart";
import { cx } from "./ui";

const REFRESH_MS = 30_000;
const STEPS = [
  { key: "hourly", label: "per hour, last 2 days" },
  { key: "daily", label: "per day, last 30 days" },
] as const;

const OPTIONS: ChartOptions = {
  scales: { x: { time: true } },
  series: [{}, bars("earned", 1, { value: (_u, v) => (v == null ? "" : credits(v)) })],
  axes: [{}, { label: "credits", size: 60 }],
  legend: { show: false },
};

/** What this user earned as a producer (all their machines), per hour or per day, as bars. */
export function EarningsChart() {
  const trpc = useTRPC();
  const [step, setStep] = useState<(typeof STEPS)[number]["key"]>("hourly");
  const series = useQuery({ ...trpc.ledger.earningsSeries.queryOptions(), refetchInterval: REFRESH_MS });
  const data = useMemo<ChartData>(() => {
    const points = series.data?.[step] ?? [];
    return [points.map((p) => p.at / 1000), points.map((p) => p.earned)];
  }, [series.data, step]);
  if (series.isError) return <p className="text-sm text-rose-700">{describeError(series.error)}</p>;
  return (
    <div className="mt-4">
      <div role="group" aria-label="Earnings step" className="mb-2 flex gap-1">
        {STEPS.map((s) => (
          <button
            key={s.key}
            type="button"
            aria-pressed={s.key === step}
            onClick={() => setStep(s.key)}
            className={cx("rounded-md px-2 py-0.5 text-xs font-medium", s.key === step ? "bg-emerald-600 text-white" : "bg-slate-100 text-slate-700 hover:bg-slate-200")}
          >
            {s.label}
          </button>
        ))}
      </div>
      <Chart options={OPTIONS} data={data} height={160} label={`Credits earned ${STEPS.find((s) => s.key === step)!.label}`} testId="earnings-chart" />
    </div>
  );
}

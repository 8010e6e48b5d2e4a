"use client";
import { useMemo, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { credits } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { Chart, bars, creditTicks, timeAxis, type ChartData, type ChartOptions } from "./chart";
import { cx } from "./ui";

const REFRESH_MS = 30_000;
const STEPS = [
  { key: "hourly", label: "per hour, last 2 days" },
  { key: "daily", label: "per day, last 30 days" },
] as const;
type Step = (typeof STEPS)[number]["key"];

const optionsFor = (what: string, colour: number): ChartOptions => ({
  scales: { x: { time: true } },
  series: [{ label: "from" }, bars(what, colour, { value: (_u, v) => (v == null ? "" : credits(v)) })],
  axes: [timeAxis, { label: "credits", size: 60, values: creditTicks }],
});
const EARNED = optionsFor("earned", 1);
const SPENT = optionsFor("spent", 0);

/** Bars of credits per hour or per day, with the choice of step. */
function PerPeriodChart({ options, points, error, what, testId }: { options: ChartOptions; points: Record<Step, { at: number; value: number }[]> | undefined; error: unknown; what: string; testId: string }) {
  const [step, setStep] = useState<Step>("hourly");
  const data = useMemo<ChartData>(() => {
    const p = points?.[step] ?? [];
    return [p.map((x) => x.at / 1000), p.map((x) => x.value)];
  }, [points, step]);
  if (error) return <p className="text-sm text-rose-700">{describeError(error)}</p>;
  return (
    <div className="mt-4">
      <div role="group" aria-label={`${what} step`} className="mb-2 flex flex-wrap gap-1">
        {STEPS.map((s) => (
          <button
            key={s.key}
            type="button"
            aria-pressed={s.key === step}
            onClick={() => setStep(s.key)}
            className={cx("rounded-md px-2 py-0.5 text-xs font-medium", s.key === step ? "bg-emerald-700 text-white" : "bg-slate-100 text-slate-700 hover:bg-slate-200")}
          >
            {s.label}
          </button>
        ))}
      </div>
      <Chart options={options} data={data} height={160} label={`${what} ${STEPS.find((s) => s.key === step)!.label}`} testId={testId} />
    </div>
  );
}

/** What this user earned as a producer (all their machines), per hour or per day, as bars. */
export function EarningsChart() {
  const trpc = useTRPC();
  const series = useQuery({ ...trpc.ledger.earningsSeries.queryOptions(), refetchInterval: REFRESH_MS });
  const points = useMemo(
    () => series.data && { hourly: series.data.hourly.map((p) => ({ at: p.at, value: p.earned })), daily: series.data.daily.map((p) => ({ at: p.at, value: p.earned })) },
    [series.data],
  );
  return <PerPeriodChart options={EARNED} points={points} error={series.error} what="Credits earned" testId="earnings-chart" />;
}

/** What this user was charged for their jobs, per hour or per day, as bars. */
export function SpendingChart() {
  const trpc = useTRPC();
  const series = useQuery({ ...trpc.ledger.spendingSeries.queryOptions(), refetchInterval: REFRESH_MS });
  const points = useMemo(
    () => series.data && { hourly: series.data.hourly.map((p) => ({ at: p.at, value: p.spent })), daily: series.data.daily.map((p) => ({ at: p.at, value: p.spent })) },
    [series.data],
  );
  return <PerPeriodChart options={SPENT} points={points} error={series.error} what="Credits spent" testId="spending-chart" />;
}

"use client";
import { useMemo, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/lib/trpc";
import { describeError } from "@/lib/reasons";
import { Chart, line, steps, timeAxis, type ChartData, type ChartOptions } from "@/components/chart";
import { Alert, Card, cx } from "@/components/ui";

type Samples = RouterOutputs["admin"]["history"]["samples"];

export const RANGES = [
  { label: "15 minutes", seconds: 900 },
  { label: "hour", seconds: 3600 },
  { label: "day", seconds: 86_400 },
  { label: "week", seconds: 604_800 },
] as const;

/** The market samples itself every 5 seconds; the charts ask for the new samples as often. */
const REFRESH_MS = 5000;

interface Panel {
  title: string;
  series: { label: string; value: (s: Samples[number]) => number | null; scale?: string; step?: boolean }[];
  /** The right-hand axis, when some series are on another scale. */
  right?: { scale: string; label: string; format?: (v: number) => string };
  left: string;
}

const PANELS: Panel[] = [
  {
    title: "Machines and slots",
    left: "count",
    series: [
      { label: "opportunistic machines", value: (s) => s.machinesOpportunistic },
      { label: "dedicated machines", value: (s) => s.machinesDedicated },
      { label: "opportunistic slots", value: (s) => s.slotsOpportunistic },
      { label: "dedicated slots", value: (s) => s.slotsDedicated },
    ],
  },
  {
    title: "Tasks and utilisation",
    left: "tasks",
    right: { scale: "%", label: "utilisation", format: (v) => `${Math.round(v)}%` },
    series: [
      { label: "queued tasks", value: (s) => s.queuedTasks },
      { label: "running tasks", value: (s) => s.runningTasks },
      { label: "utilisation %", value: (s) => s.utilisation * 100, scale: "%" },
    ],
  },
  {
    title: "Decisions per interval",
    left: "jobs",
    series: [
      { label: "admissions", value: (s) => s.admissions, step: true },
      { label: "delays", value: (s) => s.delays, step: true },
      { label: "rejections", value: (s) => s.rejections, step: true },
    ],
  },
  {
    title: "Price of a minute of reference work",
    left: "credits",
    series: [{ label: "marginal price", value: (s) => s.referencePrice }],
  },
  {
    title: "Money since the market began",
    left: "credits",
    series: [
      { label: "charged to consumers", value: (s) => s.charged },
      { label: "paid to producers", value: (s) => s.producerPaid },
      { label: "market profit", value: (s) => s.profit },
    ],
  },
];

function optionsFor(panel: Panel): ChartOptions {
  return {
    scales: { x: { time: true }, ...(panel.right ? { [panel.right.scale]: { range: [0, 100] } } : {}) },
    series: [{}, ...panel.series.map((s, i) => line(s.label, i, { ...(s.scale ? { scale: s.scale } : {}), ...(s.step ? { paths: steps() } : {}) }))],
    axes: [
      timeAxis,
      { label: panel.left, size: 60 },
      ...(panel.right ? [{ scale: panel.right.scale, side: 1 as const, label: panel.right.label, grid: { show: false }, values: (_: unknown, ticks: number[]) => ticks.map(panel.right!.format ?? String) }] : []),
    ],
    legend: { live: true },
  };
}

function dataFor(panel: Panel, samples: Samples): ChartData {
  return [samples.map((s) => s.at / 1000), ...panel.series.map((p) => samples.map(p.value))];
}

function HistoryPanel({ panel, samples, index }: { panel: Panel; samples: Samples; index: number }) {
  const options = useMemo(() => optionsFor(panel), [panel]);
  const data = useMemo(() => dataFor(panel, samples), [panel, samples]);
  return (
    <figure className="min-w-0">
      <figcaption className="mb-1 text-sm font-medium text-slate-700">{panel.title}</figcaption>
      <Chart options={options} data={data} height={180} label={`${panel.title} over time`} testId={`history-chart-${index}`} />
    </figure>
  );
}

/** The market's vital signs over the chosen range, kept up to date while the page is open. */
export function HistoryCharts() {
  const trpc = useTRPC();
  const [range, setRange] = useState<(typeof RANGES)[number]>(RANGES[0]);
  // With several Market Managers, the history of one of them, or the whole market's ("").
  const [manager, setManager] = useState("");
  const managers = useQuery({ ...trpc.admin.managers.queryOptions(), refetchInterval: REFRESH_MS });
  const names = managers.data?.managers.map((m) => m.id) ?? [];
  const history = useQuery({
    ...trpc.admin.history.queryOptions({ seconds: range.seconds, ...(manager ? { manager } : {}) }),
    refetchInterval: REFRESH_MS,
    placeholderData: (previous) => previous,
  });
  const samples = history.data?.samples ?? [];
  return (
    <Card
      title="History"
      actions={
        <div className="flex flex-wrap items-center gap-2">
        {names.length > 1 ? (
          <select value={manager} onChange={(e) => setManager(e.target.value)} aria-label="Whose history" className="rounded-md border border-slate-300 px-2 py-1 text-xs">
            <option value="">the whole market</option>
            {names.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        ) : null}
        <div role="group" aria-label="Time range" className="flex gap-1">
          {RANGES.map((r) => (
            <button
              key={r.seconds}
              type="button"
              aria-pressed={r === range}
              onClick={() => setRange(r)}
              className={cx("rounded-md px-2.5 py-1 text-xs font-medium", r === range ? "bg-indigo-600 text-white" : "bg-slate-100 text-slate-700 hover:bg-slate-200")}
            >
              {r.label === "15 minutes" ? "last 15 minutes" : `last ${r.label}`}
            </button>
          ))}
        </div>
        </div>
      }
    >
      {history.isError ? <Alert tone="error" title="The history could not be loaded">{describeError(history.error)}</Alert> : null}
      {!history.isPending && samples.length === 0 ? (
        <p className="text-sm text-slate-500">The market records its figures every few seconds; the first ones appear here shortly.</p>
      ) : (
        <div className="grid grid-cols-1 gap-6 lg:grid-cols-2">
          {PANELS.map((p, i) => (
            <HistoryPanel key={p.title} panel={p} samples={samples} index={i} />
          ))}
        </div>
      )}
      <p className="mt-3 text-xs text-slate-500">
        {history.data
          ? `${samples.length} points, one per ${history.data.resolution} seconds (older history is kept at coarser steps)${history.data.manager ? `; the Market Manager ${history.data.manager}'s machines, tasks and decisions (money is the whole market's)` : ""}.`
          : "…"}
      </p>
    </Card>
  );
}

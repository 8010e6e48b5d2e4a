"use client";
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { timeTicks } from "@/lib/time-ticks";

export type ChartOptions = Omit<uPlot.Options, "width" | "height">;
export type ChartData = uPlot.AlignedData;

/** Each series' last point with a value (the x series' last point): what the legend shows while no one hovers. */
function latestIndexes(u: uPlot): (number | null)[] {
  return u.series.map((_, i) => {
    const values = u.data[i] ?? [];
    for (let k = values.length - 1; k >= 0; k--) if (values[k] != null) return k;
    return null;
  });
}

/**
 * The legend shows the hovered point's values, and the latest values while the cursor is off the
 * chart (uPlot's own legend shows "--" then): after every draw, and each time the cursor leaves.
 */
const latestInLegend: uPlot.Plugin = {
  hooks: {
    draw: [(u) => void (u.cursor.idx == null && u.setLegend({ idxs: latestIndexes(u) }, false))],
    setCursor: [(u) => void (u.cursor.idx == null && u.setLegend({ idxs: latestIndexes(u) }, false))],
  },
};

/**
 * A uPlot chart (canvas, so thousands of points and many series draw in a few milliseconds).
 * It is made once per `options` (memoise them) and only given new data after that, which uPlot
 * redraws without rebuilding anything; it follows its container's width.
 */
export function Chart({ options, data, height = 220, label, testId }: { options: ChartOptions; data: ChartData; height?: number; label: string; testId?: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(data);
  latest.current = data;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const u = new uPlot({ ...options, plugins: [...(options.plugins ?? []), latestInLegend], width: Math.max(200, el.clientWidth), height }, latest.current, el);
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [options, height]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  const xs = data[0] ?? [];
  return (
    <div
      ref={box}
      role="img"
      aria-label={label}
      data-testid={testId}
      data-points={xs.length}
      data-last={xs.length ? String(xs[xs.length - 1]) : ""}
      // Hidden overflow: a chart drawn wider than a narrowed page (a phone turned) does not hold the page wide while it follows.
      className="w-full min-w-0 overflow-hidden"
    />
  );
}

/** Series colours that stay apart on white and for common colour blindness. */
export const PALETTE = ["#4f46e5", "#059669", "#d97706", "#dc2626", "#0891b2", "#7c3aed", "#65a30d", "#db2777"];

/** A line series in the palette's n-th colour. */
export const line = (label: string, n: number, extra: Partial<uPlot.Series> = {}): uPlot.Series => ({ label, stroke: PALETTE[n % PALETTE.length], width: 1.5, ...extra });

/** Bars, for counts per interval (earnings per hour, admissions per sample). */
export const bars = (label: string, n: number, extra: Partial<uPlot.Series> = {}): uPlot.Series => ({
  label,
  stroke: PALETTE[n % PALETTE.length],
  fill: `${PALETTE[n % PALETTE.length]}99`,
  paths: uPlot.paths.bars!({ size: [0.7, 40] }),
  points: { show: false },
  ...extra,
});

/**
 * One unit for a whole axis of durations (seconds): the one that reads its largest value best, so
 * ticks never mix "800 ms" with "1.2 min".
 */
export function durationUnit(largest: number): { unit: "ms" | "s" | "min" | "h" | "days"; seconds: number } {
  if (largest < 2) return { unit: "ms", seconds: 0.001 };
  if (largest < 180) return { unit: "s", seconds: 1 };
  if (largest < 3 * 3600) return { unit: "min", seconds: 60 };
  if (largest < 3 * 86_400) return { unit: "h", seconds: 3600 };
  return { unit: "days", seconds: 86_400 };
}

/** Tick labels of a duration axis in one unit, with as few decimals as the ticks need. */
export const durationTicks = (unitSeconds: number) => (_u: uPlot, ticks: number[]) => {
  const step = ticks.length > 1 ? Math.abs(ticks[1]! - ticks[0]!) / unitSeconds : 1;
  const decimals = step >= 1 ? 0 : Math.min(3, Math.ceil(-Math.log10(step)));
  return ticks.map((t) => (t / unitSeconds).toLocaleString("en-US", { maximumFractionDigits: decimals }));
};

/** Tick labels of a credits axis: 3 decimals at most, as every amount on the pages. */
export const creditTicks = (_u: uPlot, ticks: number[]) => ticks.map((t) => t.toLocaleString("en-US", { maximumFractionDigits: 3 }));

/** Steps, for counts that hold over each interval. */
export const steps = (): uPlot.Series.PathBuilder => uPlot.paths.stepped!({ align: 1 });

/** A time x axis whose labels never overlap: one line each, far enough apart for the widest. */
export const timeAxis: uPlot.Axis = { space: 80, values: (_u, ticks) => timeTicks(ticks) };

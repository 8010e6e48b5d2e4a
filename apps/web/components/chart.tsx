"use client";
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export type ChartOptions = Omit<uPlot.Options, "width" | "height">;
export type ChartData = uPlot.AlignedData;

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
    const u = new uPlot({ ...options, width: Math.max(200, el.clientWidth), height }, latest.current, el);
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
      className="w-full min-w-0"
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

/** Steps, for counts that hold over each interval. */
export const steps = (): uPlot.Series.PathBuilder => uPlot.paths.stepped!({ align: 1 });

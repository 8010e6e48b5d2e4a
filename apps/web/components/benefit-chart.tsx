"use client";
import { useMemo } from "react";
import type uPlot from "uplot";
import { benefitAt, breakpoints, type BenefitCurve } from "@cyclemarket/costbenefit";
import { seconds } from "@/lib/format";
import { Chart, PALETTE, line, steps, type ChartData, type ChartOptions } from "./chart";

/** A vertical line with a label at each of these times (seconds after arrival), drawn on the plot. */
function markers(marks: { t: number; label: string; colour: string }[]): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u) => {
          const { ctx } = u;
          const { top, height } = u.bbox;
          ctx.save();
          ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
          ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
          ctx.lineWidth = devicePixelRatio;
          marks.forEach((m, i) => {
            const x = u.valToPos(m.t, "x", true);
            ctx.strokeStyle = m.colour;
            ctx.fillStyle = m.colour;
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            ctx.fillText(m.label, x + 4 * devicePixelRatio, top + (12 + (i % 3) * 13) * devicePixelRatio);
          });
          ctx.restore();
        },
      ],
    },
  };
}

const breakpointLabel = (curve: BenefitCurve, t: number) => (curve.kind === "deadline" ? `deadline ${seconds(t)}` : seconds(t));

/**
 * A benefit curve b(t) with its axes and its breakpoints labelled and, for a running job, the
 * tasks done over time against it and the moment the market expects it to complete.
 */
export function BenefitChart({
  curve,
  doneAt,
  taskCount,
  expectedCompletion,
  now,
  height = 200,
  label,
  testId,
}: {
  curve: BenefitCurve;
  /** Seconds after arrival at which each task was done, ascending. */
  doneAt?: number[];
  taskCount?: number;
  expectedCompletion?: number | null;
  /** Seconds since arrival, for a job still running: the chart reaches the present. */
  now?: number | null;
  height?: number;
  label: string;
  testId?: string;
}) {
  const marks = breakpoints(curve);
  const horizon = Math.max(60, ...marks.map((m) => m * 1.25), (expectedCompletion ?? 0) * 1.1, (now ?? 0) * 1.05, ...(doneAt?.length ? [doneAt[doneAt.length - 1]! * 1.1] : []));
  const withTasks = doneAt !== undefined;
  const options = useMemo<ChartOptions>(() => {
    const lines = marks.map((t) => ({ t, label: breakpointLabel(curve, t), colour: "#64748b" }));
    if (expectedCompletion != null) lines.push({ t: expectedCompletion, label: `expected ${seconds(expectedCompletion)}`, colour: PALETTE[1]! });
    return {
      scales: { x: { time: false }, tasks: { range: [0, Math.max(1, taskCount ?? 1)] } },
      series: [
        { label: "after", value: (_u, v) => (v == null ? "" : seconds(v)) },
        line("benefit (credits)", 0, { width: 2.5 }),
        ...(withTasks ? [line("tasks done", 1, { scale: "tasks", paths: steps() })] : []),
      ],
      axes: [
        { label: "seconds after submission", values: (_u, ticks) => ticks.map((t) => seconds(t)) },
        { label: "benefit (credits)", size: 60 },
        ...(withTasks ? [{ scale: "tasks", side: 1 as const, label: "tasks done", grid: { show: false } }] : []),
      ],
      plugins: [markers(lines)],
      legend: { show: withTasks },
    };
    // A new curve or job is a new chart; new tasks only new data.
  }, [JSON.stringify(curve), expectedCompletion, taskCount, withTasks]); // eslint-disable-line react-hooks/exhaustive-deps
  const data = useMemo<ChartData>(() => {
    const xs = new Set<number>([0, horizon]);
    for (let i = 1; i < 120; i++) xs.add((horizon * i) / 120);
    for (const m of marks) {
      xs.add(m);
      xs.add(m + horizon / 10_000); // a jump at a deadline is drawn as a jump
    }
    for (const t of doneAt ?? []) xs.add(t);
    const x = [...xs].filter((t) => t >= 0 && t <= horizon).sort((a, b) => a - b);
    const benefit = x.map((t) => benefitAt(curve, t));
    if (!withTasks) return [x, benefit];
    let i = 0;
    const done = x.map((t) => {
      while (i < doneAt!.length && doneAt![i]! <= t) i += 1;
      return now != null && t > now ? null : i;
    });
    return [x, benefit, done];
  }, [curve, doneAt, horizon, marks, now, withTasks]);
  return <Chart options={options} data={data} height={height} label={label} testId={testId} />;
}

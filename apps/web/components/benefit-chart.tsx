"use client";
import { useMemo, useRef } from "react";
import type uPlot from "uplot";
import { benefitAt, breakpoints, type BenefitCurve } from "@cyclemarket/costbenefit";
import { seconds } from "@/lib/format";
import { Chart, PALETTE, creditTicks, durationTicks, durationUnit, line, steps, type ChartData, type ChartOptions } from "./chart";

interface Mark {
  t: number;
  label: string;
  colour: string;
}

/** A vertical line with a label at each of these times (seconds after arrival), drawn on the plot; read at each draw, so they can move. */
function markers(current: { current: Mark[] }): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u) => {
          const { ctx } = u;
          const { top, height, left, width } = u.bbox;
          ctx.save();
          ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
          ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
          ctx.lineWidth = devicePixelRatio;
          current.current.forEach((m, i) => {
            const x = u.valToPos(m.t, "x", true);
            if (x < left - 1 || x > left + width + 1) return;
            ctx.strokeStyle = m.colour;
            ctx.fillStyle = m.colour;
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            // A label near the right edge is written to the left of its line, so it stays on the plot.
            const w = ctx.measureText(m.label).width;
            const at = x + 4 * devicePixelRatio + w > left + width ? x - 4 * devicePixelRatio - w : x + 4 * devicePixelRatio;
            ctx.fillText(m.label, at, top + (12 + (i % 3) * 13) * devicePixelRatio);
          });
          ctx.restore();
        },
      ],
    },
  };
}

const breakpointLabel = (curve: BenefitCurve, t: number) => (curve.kind === "deadline" ? `deadline ${seconds(t)}` : seconds(t));

/** A breakpoint past the job's own time is drawn when it is this near: within this many times that time. */
const NEAR = 3;

/**
 * The time the chart spans. A curve alone (the new job's preview): all its breakpoints. A job's
 * progress: the job's own time (now, its completion or its estimate, whichever is latest), and
 * the curve's next breakpoint too when it is near; one far off is named under the chart instead.
 */
function spanOf(marks: number[], job: { own: number } | null): { horizon: number; beyond: number | null } {
  if (!job) return { horizon: Math.max(60, ...marks.map((m) => m * 1.25)), beyond: null };
  let horizon = Math.max(1, job.own * 1.15);
  const next = marks.find((m) => m > horizon);
  if (next !== undefined && next <= NEAR * Math.max(1, job.own)) horizon = next * 1.08;
  return { horizon, beyond: marks.find((m) => m > horizon) ?? null };
}

/**
 * A benefit curve b(t) with its axes and its breakpoints labelled and, for a job, the tasks done
 * over time against it, over the job's own time, with the moment the market now expects it to
 * complete (moving with measured progress) and the one it quoted.
 */
export function BenefitChart({
  curve,
  doneAt,
  taskCount,
  expected,
  quoted,
  now,
  height = 200,
  label,
  testId,
}: {
  curve: BenefitCurve;
  /** Seconds after arrival at which each task was done, ascending. */
  doneAt?: number[];
  taskCount?: number;
  /** The live estimate of completion, seconds after arrival. */
  expected?: number | null;
  /** The completion the quote promised, seconds after arrival. */
  quoted?: number | null;
  /** Seconds since arrival: the present for a running job, its completion for a finished one. */
  now?: number | null;
  height?: number;
  label: string;
  testId?: string;
}) {
  const marks = breakpoints(curve);
  const withTasks = doneAt !== undefined;
  const own = withTasks ? Math.max(now ?? 0, expected ?? 0, quoted ?? 0, doneAt.length ? doneAt[doneAt.length - 1]! : 0) : 0;
  const { horizon, beyond } = spanOf(marks, withTasks ? { own } : null);
  const unit = durationUnit(horizon);
  const lines = useRef<Mark[]>([]);
  lines.current = marks.map((t) => ({ t, label: breakpointLabel(curve, t), colour: "#475569" }));
  if (quoted != null) lines.current.push({ t: quoted, label: `quoted ${seconds(quoted)}`, colour: "#475569" });
  if (expected != null) lines.current.push({ t: expected, label: `expected ${seconds(expected)}`, colour: PALETTE[1]! });
  const options = useMemo<ChartOptions>(() => {
    return {
      scales: { x: { time: false }, tasks: { range: [0, Math.max(1, taskCount ?? 1)] } },
      series: [
        { label: "after", value: (_u, v) => (v == null ? "" : seconds(v)) },
        line("benefit", 0, { width: 2.5, value: (_u, v) => (v == null ? "" : `${v.toLocaleString("en-US", { maximumFractionDigits: 3 })} cr`) }),
        ...(withTasks ? [line("tasks done", 1, { scale: "tasks", paths: steps() })] : []),
      ],
      axes: [
        { label: `time after submission (${unit.unit})`, values: durationTicks(unit.seconds) },
        { label: "benefit (credits)", size: 60, values: creditTicks },
        ...(withTasks ? [{ scale: "tasks", side: 1 as const, label: "tasks done", grid: { show: false } }] : []),
      ],
      plugins: [markers(lines)],
      legend: { show: withTasks },
    };
    // A new curve, job or unit is a new chart; new tasks and a moving estimate only new data and a redraw.
  }, [JSON.stringify(curve), taskCount, withTasks, unit.unit]); // eslint-disable-line react-hooks/exhaustive-deps
  const data = useMemo<ChartData>(() => {
    const xs = new Set<number>([0, horizon]);
    for (let i = 1; i < 120; i++) xs.add((horizon * i) / 120);
    for (const m of marks) {
      xs.add(m);
      xs.add(m + horizon / 10_000); // a jump at a deadline is drawn as a jump
    }
    for (const t of doneAt ?? []) xs.add(t);
    if (now != null) xs.add(now);
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
  return (
    <>
      <Chart options={options} data={data} height={height} label={label} testId={testId} />
      {beyond !== null ? (
        <p className="mt-1 text-xs text-slate-600" data-testid="chart-beyond">
          The curve&apos;s next {curve.kind === "deadline" ? "deadline" : "change"} is at {seconds(beyond)} after submission, past the right edge of this chart.
        </p>
      ) : null}
    </>
  );
}

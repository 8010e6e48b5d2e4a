// Benefit curves b(j, t): what the consumer pays if the whole job completes t seconds after it
// arrived (the Java Market paper, section 4.2 and figure 4.3). Never increasing in t; may go negative, in which
// case the market compensates the consumer.
import { z } from "zod";

/** Largest credit amount a curve may name: far above any real job, far below float trouble. */
export const MAX_CREDITS = 1e12;
/** Longest time a curve may name: about 31.7 years, in seconds. */
export const MAX_SECONDS = 1e9;
/** Most points a piecewise curve may have, so evaluation stays cheap. */
export const MAX_POINTS = 1000;

const credits = z
  .number()
  .refine(Number.isFinite, { message: "must be a finite number" })
  .refine((v) => Math.abs(v) <= MAX_CREDITS, { message: `must be within ±${MAX_CREDITS} credits` });
const seconds = z
  .number()
  .refine(Number.isFinite, { message: "must be a finite number" })
  .refine((v) => v >= 0 && v <= MAX_SECONDS, { message: `must be between 0 and ${MAX_SECONDS} seconds` });

const Constant = z.object({ kind: z.literal("constant"), value: credits });
const Deadline = z.object({
  kind: z.literal("deadline"),
  value: credits,
  deadline: seconds,
  /** Paid after the deadline; defaults to 0; negative means the market compensates. */
  penalty: credits.optional(),
});
const LinearDecay = z.object({
  kind: z.literal("linear-decay"),
  value: credits,
  start: seconds,
  end: seconds,
  floor: credits,
});
const Piecewise = z.object({
  kind: z.literal("piecewise"),
  points: z.array(z.object({ t: seconds, value: credits })).min(1).max(MAX_POINTS),
});

export const BenefitCurve = z
  .discriminatedUnion("kind", [Constant, Deadline, LinearDecay, Piecewise])
  .superRefine((c, ctx) => {
    // Benefit never increases with completion time (docs/DESIGN.md, "Benefit").
    if (c.kind === "deadline" && (c.penalty ?? 0) > c.value) {
      ctx.addIssue({
        code: "custom",
        path: ["penalty"],
        // A penalty left out is 0: a negative value then needs one at most as low, and the words say so.
        message:
          c.penalty === undefined
            ? `penalty (0 when left out) must not exceed value (${c.value}): benefit may not increase after the deadline; give a penalty of at most ${c.value}`
            : `penalty (${c.penalty}) must not exceed value (${c.value}): benefit may not increase after the deadline`,
      });
    }
    if (c.kind === "linear-decay") {
      if (c.end < c.start) ctx.addIssue({ code: "custom", path: ["end"], message: `end (${c.end}) must not be before start (${c.start})` });
      if (c.floor > c.value) ctx.addIssue({ code: "custom", path: ["floor"], message: `floor (${c.floor}) must not exceed value (${c.value}): benefit may not increase` });
    }
    if (c.kind === "piecewise") {
      for (let i = 1; i < c.points.length; i++) {
        const a = c.points[i - 1]!;
        const b = c.points[i]!;
        if (b.t <= a.t) ctx.addIssue({ code: "custom", path: ["points", i, "t"], message: `times must strictly increase (${b.t} after ${a.t})` });
        if (b.value > a.value) ctx.addIssue({ code: "custom", path: ["points", i, "value"], message: `benefit may not increase (${b.value} after ${a.value})` });
      }
    }
  });
export type BenefitCurve = z.infer<typeof BenefitCurve>;

/** b(t) for t seconds after arrival. Before the first piecewise point the first value holds. */
export function benefitAt(curve: BenefitCurve, t: number): number {
  switch (curve.kind) {
    case "constant":
      return curve.value;
    case "deadline":
      return t <= curve.deadline ? curve.value : (curve.penalty ?? 0);
    case "linear-decay": {
      if (t <= curve.start) return curve.value;
      if (t >= curve.end) return curve.floor;
      const f = (t - curve.start) / (curve.end - curve.start);
      return curve.value + (curve.floor - curve.value) * f;
    }
    case "piecewise": {
      const p = curve.points;
      if (t <= p[0]!.t) return p[0]!.value;
      // Binary search for the segment: curves may have many points.
      let lo = 0;
      let hi = p.length - 1;
      if (t >= p[hi]!.t) return p[hi]!.value;
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (p[mid]!.t <= t) lo = mid;
        else hi = mid;
      }
      const a = p[lo]!;
      const b = p[hi]!;
      return a.value + ((b.value - a.value) * (t - a.t)) / (b.t - a.t);
    }
  }
}

/** The most the job can pay: its benefit at t = 0, since curves never increase. */
export function maxBenefit(curve: BenefitCurve): number {
  return benefitAt(curve, 0);
}

/** The least the job can pay, at any completion time. */
export function minBenefit(curve: BenefitCurve): number {
  switch (curve.kind) {
    case "constant":
      return curve.value;
    case "deadline":
      return Math.min(curve.value, curve.penalty ?? 0);
    case "linear-decay":
      return curve.floor;
    case "piecewise":
      return curve.points[curve.points.length - 1]!.value;
  }
}

/**
 * Times (seconds after arrival) where the curve jumps or changes slope: the candidate completion
 * times of the miserly negotiation (docs/DESIGN.md, step 1). Finishing just by a breakpoint is the
 * latest completion that still earns the value before it.
 */
export function breakpoints(curve: BenefitCurve): number[] {
  switch (curve.kind) {
    case "constant":
      return [];
    case "deadline":
      return [curve.deadline];
    case "linear-decay":
      return curve.start === curve.end ? [curve.start] : [curve.start, curve.end];
    case "piecewise":
      return curve.points.map((p) => p.t);
  }
}

/**
 * The curve as the market plans with it when the consumer will pay at most `cap`: min(b(t), cap)
 * at every t, of the same kind where that is exact (a piecewise curve otherwise). Admission then
 * never offers a price above what the consumer allows.
 */
export function cappedBenefit(curve: BenefitCurve, cap: number): BenefitCurve {
  const c = Math.max(-MAX_CREDITS, Math.min(MAX_CREDITS, cap));
  switch (curve.kind) {
    case "constant":
      return { ...curve, value: Math.min(curve.value, c) };
    case "deadline":
      return { ...curve, value: Math.min(curve.value, c), ...(curve.penalty === undefined ? {} : { penalty: Math.min(curve.penalty, c) }) };
    case "linear-decay": {
      if (curve.value <= c) return curve;
      if (curve.floor >= c) return { kind: "constant", value: c };
      // A step at `start`: the cap before it, the floor after.
      if (curve.end === curve.start) return { ...curve, value: c };
      // Flat at the cap until the decay crosses it, then the same decay.
      const crosses = curve.start + ((curve.value - c) / (curve.value - curve.floor)) * (curve.end - curve.start);
      return { ...curve, value: c, start: crosses };
    }
    case "piecewise": {
      const points: { t: number; value: number }[] = [];
      for (let i = 0; i < curve.points.length; i++) {
        const p = curve.points[i]!;
        const prev = curve.points[i - 1];
        // A segment that falls through the cap gains the point where it crosses it.
        if (prev && prev.value > c && p.value < c) points.push({ t: prev.t + ((prev.value - c) / (prev.value - p.value)) * (p.t - prev.t), value: c });
        points.push({ t: p.t, value: Math.min(p.value, c) });
      }
      // Equal neighbours at the cap say nothing the first of them does not.
      const kept = points.filter((p, i) => i === 0 || p.t > points[i - 1]!.t);
      return { kind: "piecewise", points: kept.slice(0, MAX_POINTS) };
    }
  }
}

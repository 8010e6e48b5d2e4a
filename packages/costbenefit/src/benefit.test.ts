import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { BenefitCurve, benefitAt, breakpoints, cappedBenefit, maxBenefit, minBenefit } from "./benefit.ts";

describe("benefitAt", () => {
  it("pays a deadline job in full until the deadline, then the penalty", () => {
    const c = BenefitCurve.parse({ kind: "deadline", value: 20, deadline: 6 * 3600, penalty: -5 });
    expect(benefitAt(c, 0)).toBe(20);
    expect(benefitAt(c, 6 * 3600)).toBe(20);
    expect(benefitAt(c, 6 * 3600 + 1)).toBe(-5);
    expect(breakpoints(c)).toEqual([6 * 3600]);
  });

  it("decays linearly between start and end and stays at the floor after", () => {
    const c = BenefitCurve.parse({ kind: "linear-decay", value: 10, start: 100, end: 200, floor: -2 });
    expect(benefitAt(c, 50)).toBe(10);
    expect(benefitAt(c, 150)).toBeCloseTo(4);
    expect(benefitAt(c, 1000)).toBe(-2);
    expect(maxBenefit(c)).toBe(10);
    expect(minBenefit(c)).toBe(-2);
  });

  it("interpolates piecewise curves, flat before the first and after the last point", () => {
    const c = BenefitCurve.parse({ kind: "piecewise", points: [{ t: 10, value: 8 }, { t: 20, value: 4 }, { t: 40, value: 0 }] });
    expect(benefitAt(c, 0)).toBe(8);
    expect(benefitAt(c, 15)).toBeCloseTo(6);
    expect(benefitAt(c, 30)).toBeCloseTo(2);
    expect(benefitAt(c, 99)).toBe(0);
    expect(breakpoints(c)).toEqual([10, 20, 40]);
  });
});

describe("BenefitCurve validation", () => {
  const refuse = (input: unknown) => {
    const r = BenefitCurve.safeParse(input);
    expect(r.success).toBe(false);
    return r.success ? [] : r.error.issues.map((i) => i.message);
  };

  it("refuses curves whose benefit would rise with time, naming the offending point", () => {
    const msgs = refuse({ kind: "piecewise", points: [{ t: 0, value: 1 }, { t: 5, value: 3 }] });
    expect(msgs.join(" ")).toMatch(/may not increase/);
    expect(refuse({ kind: "deadline", value: 1, deadline: 5, penalty: 2 }).join(" ")).toMatch(/penalty/);
    expect(refuse({ kind: "linear-decay", value: 1, start: 0, end: 5, floor: 3 }).join(" ")).toMatch(/floor/);
  });

  it("a negative deadline value without a penalty says the penalty left out is 0 and what to give", () => {
    const words = refuse({ kind: "deadline", value: -5, deadline: 10 }).join(" ");
    expect(words).toContain("penalty (0 when left out) must not exceed value (-5)");
    expect(words).toContain("give a penalty of at most -5");
  });

  it("refuses non-finite numbers, absurd magnitudes and unknown kinds", () => {
    expect(refuse({ kind: "constant", value: Number.NaN }).length).toBeGreaterThan(0);
    expect(refuse({ kind: "constant", value: 1e15 }).join(" ")).toMatch(/credits/);
    expect(refuse({ kind: "deadline", value: 1, deadline: -1 }).join(" ")).toMatch(/seconds/);
    expect(refuse({ kind: "step", value: 1 }).length).toBeGreaterThan(0);
  });

  it("any valid curve is non-increasing in time (property)", () => {
    const curve = fc.oneof(
      fc.record({ kind: fc.constant("constant" as const), value: fc.double({ min: -1e6, max: 1e6, noNaN: true }) }),
      fc
        .tuple(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.double({ min: 0, max: 1e6, noNaN: true }), fc.double({ min: 0, max: 1e6, noNaN: true }))
        .map(([v, a, b]) => ({ kind: "linear-decay" as const, value: v, start: Math.min(a, b), end: Math.max(a, b), floor: v - Math.abs(a - b) })),
    );
    fc.assert(
      fc.property(curve, fc.double({ min: 0, max: 2e6, noNaN: true }), fc.double({ min: 0, max: 2e6, noNaN: true }), (raw, t1, t2) => {
        const c = BenefitCurve.parse(raw);
        const [a, b] = t1 <= t2 ? [t1, t2] : [t2, t1];
        expect(benefitAt(c, b)).toBeLessThanOrEqual(benefitAt(c, a) + 1e-9 * Math.max(1, Math.abs(benefitAt(c, a))));
      }),
    );
  });
});

describe("cappedBenefit", () => {
  const curve: fc.Arbitrary<BenefitCurve> = fc.oneof(
    fc.record({ kind: fc.constant("constant" as const), value: fc.double({ min: -50, max: 300, noNaN: true }) }),
    fc
      .record({ value: fc.double({ min: 0, max: 300, noNaN: true }), deadline: fc.double({ min: 0, max: 300, noNaN: true }), drop: fc.double({ min: 0, max: 400, noNaN: true }) })
      .map(({ value, deadline, drop }) => ({ kind: "deadline" as const, value, deadline, penalty: value - drop })),
    fc
      .record({ value: fc.double({ min: 0, max: 300, noNaN: true }), start: fc.double({ min: 0, max: 100, noNaN: true }), length: fc.double({ min: 0, max: 200, noNaN: true }), drop: fc.double({ min: 0, max: 400, noNaN: true }) })
      .map(({ value, start, length, drop }) => ({ kind: "linear-decay" as const, value, start, end: start + length, floor: value - drop })),
    fc
      .array(fc.tuple(fc.double({ min: 0.01, max: 50, noNaN: true }), fc.double({ min: 0, max: 80, noNaN: true })), { minLength: 1, maxLength: 6 })
      .map((steps) => {
        let t = 0;
        let value = 300;
        return { kind: "piecewise" as const, points: steps.map(([dt, dv]) => ({ t: (t += dt), value: (value -= dv) })) };
      }),
  );

  it("is min(b(t), cap) at every t, and a valid curve (property)", () => {
    fc.assert(
      fc.property(curve, fc.double({ min: -10, max: 350, noNaN: true }), fc.double({ min: 0, max: 600, noNaN: true }), (c, cap, t) => {
        const capped = cappedBenefit(c, cap);
        expect(BenefitCurve.safeParse(capped).success).toBe(true);
        expect(benefitAt(capped, t)).toBeCloseTo(Math.min(benefitAt(c, t), cap), 6);
      }),
    );
  });
});

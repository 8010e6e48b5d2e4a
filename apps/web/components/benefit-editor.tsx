"use client";
// The benefit curve editor: what finishing sooner is worth, as a curve of credits over the
// seconds after the job arrives. Validated with the engine's own schema before it is sent.
import { BenefitCurve, benefitAt, breakpoints } from "@cyclemarket/costbenefit";
import { credits, seconds } from "@/lib/format";
import { Button, Field, inputClass } from "./ui";
import { BenefitChart } from "./benefit-chart";
import { DEFAULT_BENEFIT_CREDITS } from "@/lib/default-benefit";

export type CurveKind = BenefitCurve["kind"];

export interface BenefitDraft {
  kind: CurveKind;
  value: string;
  deadline: string;
  penalty: string;
  start: string;
  end: string;
  floor: string;
  points: { t: string; value: string }[];
}

/** What a new form offers: a curve whose highest benefit fits a new account's balance (lib/default-benefit.ts). */
export const DEFAULT_BENEFIT: BenefitDraft = {
  kind: "constant",
  value: String(DEFAULT_BENEFIT_CREDITS),
  deadline: "120",
  penalty: "0",
  start: "60",
  end: "600",
  floor: String(DEFAULT_BENEFIT_CREDITS / 10),
  points: [
    { t: "0", value: String(DEFAULT_BENEFIT_CREDITS) },
    { t: "120", value: String((DEFAULT_BENEFIT_CREDITS * 6) / 10) },
    { t: "600", value: "0" },
  ],
};

const KINDS: { value: CurveKind; label: string; hint: string }[] = [
  { value: "constant", label: "Constant", hint: "The same amount whenever the job finishes." },
  { value: "deadline", label: "Deadline", hint: "The full amount until a deadline, then a penalty amount (0 by default, negative to be compensated)." },
  { value: "linear-decay", label: "Linear decay", hint: "The full amount until the decay starts, falling linearly to a floor when it ends." },
  { value: "piecewise", label: "Piecewise linear", hint: "Straight lines through points of (seconds, credits); never increasing." },
];

const toNumber = (s: string) => (s.trim() === "" ? Number.NaN : Number(s));

/** The curve the draft describes, or the problems with it, keyed by field. */
export function buildCurve(d: BenefitDraft): { curve: BenefitCurve | null; errors: Record<string, string> } {
  const raw =
    d.kind === "constant"
      ? { kind: d.kind, value: toNumber(d.value) }
      : d.kind === "deadline"
        ? { kind: d.kind, value: toNumber(d.value), deadline: toNumber(d.deadline), ...(d.penalty.trim() ? { penalty: toNumber(d.penalty) } : {}) }
        : d.kind === "linear-decay"
          ? { kind: d.kind, value: toNumber(d.value), start: toNumber(d.start), end: toNumber(d.end), floor: toNumber(d.floor) }
          : { kind: d.kind, points: d.points.map((p) => ({ t: toNumber(p.t), value: toNumber(p.value) })) };
  const parsed = BenefitCurve.safeParse(raw);
  if (parsed.success) return { curve: parsed.data, errors: {} };
  const errors: Record<string, string> = {};
  for (const issue of parsed.error.issues) {
    const key = issue.path.join(".") || "curve";
    const message = /expected number, received NaN/i.test(issue.message) ? "Enter a number." : issue.message;
    errors[key] ??= message.charAt(0).toUpperCase() + message.slice(1);
  }
  return { curve: null, errors };
}

export function BenefitEditor({ draft, onChange, showErrors }: { draft: BenefitDraft; onChange: (d: BenefitDraft) => void; showErrors: boolean }) {
  const { curve, errors } = buildCurve(draft);
  const err = (key: string) => (showErrors ? (errors[key] ?? null) : null);
  const set = (patch: Partial<BenefitDraft>) => onChange({ ...draft, ...patch });
  const kind = KINDS.find((k) => k.value === draft.kind)!;

  return (
    <div className="space-y-4">
      <Field label="Curve shape" hint={kind.hint}>
        {(p) => (
          <select {...p} value={draft.kind} onChange={(e) => set({ kind: e.target.value as CurveKind })} className={inputClass}>
            {KINDS.map((k) => (
              <option key={k.value} value={k.value}>
                {k.label}
              </option>
            ))}
          </select>
        )}
      </Field>

      {draft.kind !== "piecewise" ? (
        <div className="grid gap-4 sm:grid-cols-2">
          <Field label="Benefit" hint="Credits you pay if the job finishes in time." error={err("value")}>
            {(p) => <input {...p} type="number" inputMode="decimal" step="any" value={draft.value} onChange={(e) => set({ value: e.target.value })} className={inputClass} />}
          </Field>
          {draft.kind === "deadline" ? (
            <>
              <Field label="Deadline (seconds after submitting)" error={err("deadline")}>
                {(p) => <input {...p} type="number" min={0} step="any" value={draft.deadline} onChange={(e) => set({ deadline: e.target.value })} className={inputClass} />}
              </Field>
              <Field label="Paid after the deadline (credits)" hint="0 by default; negative means the market compensates you." error={err("penalty")}>
                {(p) => <input {...p} type="number" step="any" value={draft.penalty} onChange={(e) => set({ penalty: e.target.value })} className={inputClass} />}
              </Field>
            </>
          ) : null}
          {draft.kind === "linear-decay" ? (
            <>
              <Field label="Decay starts (seconds)" error={err("start")}>
                {(p) => <input {...p} type="number" min={0} step="any" value={draft.start} onChange={(e) => set({ start: e.target.value })} className={inputClass} />}
              </Field>
              <Field label="Decay ends (seconds)" error={err("end")}>
                {(p) => <input {...p} type="number" min={0} step="any" value={draft.end} onChange={(e) => set({ end: e.target.value })} className={inputClass} />}
              </Field>
              <Field label="Floor (credits)" error={err("floor")}>
                {(p) => <input {...p} type="number" step="any" value={draft.floor} onChange={(e) => set({ floor: e.target.value })} className={inputClass} />}
              </Field>
            </>
          ) : null}
        </div>
      ) : (
        <PointsEditor draft={draft} onChange={onChange} err={err} />
      )}

      {showErrors && errors.curve ? <p className="text-xs text-rose-600">{errors.curve}</p> : null}
      {curve ? <CurvePreview curve={curve} /> : null}
    </div>
  );
}

function PointsEditor({ draft, onChange, err }: { draft: BenefitDraft; onChange: (d: BenefitDraft) => void; err: (key: string) => string | null }) {
  const setPoint = (i: number, patch: Partial<{ t: string; value: string }>) =>
    onChange({ ...draft, points: draft.points.map((p, j) => (j === i ? { ...p, ...patch } : p)) });
  return (
    <div className="space-y-2">
      {draft.points.map((pt, i) => (
        <div key={i} className="grid grid-cols-[1fr_1fr_auto] items-end gap-3">
          <Field label={`Point ${i + 1}: seconds`} error={err(`points.${i}.t`)}>
            {(p) => <input {...p} type="number" min={0} step="any" value={pt.t} onChange={(e) => setPoint(i, { t: e.target.value })} className={inputClass} />}
          </Field>
          <Field label={`Point ${i + 1}: credits`} error={err(`points.${i}.value`)}>
            {(p) => <input {...p} type="number" step="any" value={pt.value} onChange={(e) => setPoint(i, { value: e.target.value })} className={inputClass} />}
          </Field>
          <Button
            variant="ghost"
            aria-label={`Remove point ${i + 1}`}
            disabled={draft.points.length <= 1}
            onClick={() => onChange({ ...draft, points: draft.points.filter((_, j) => j !== i) })}
          >
            Remove
          </Button>
        </div>
      ))}
      <Button
        variant="secondary"
        onClick={() => {
          const last = draft.points[draft.points.length - 1];
          onChange({ ...draft, points: [...draft.points, { t: String(Number(last?.t ?? 0) + 60), value: last?.value ?? "0" }] });
        }}
      >
        Add a point
      </Button>
    </div>
  );
}

/** b(t) with its axes and breakpoints, so the consumer sees what they are promising. */
function CurvePreview({ curve }: { curve: BenefitCurve }) {
  const horizon = Math.max(60, ...breakpoints(curve).map((m) => m * 1.25));
  return (
    <figure className="rounded-lg bg-slate-50 p-3">
      <BenefitChart curve={curve} height={180} label="Preview of the curve" testId="curve-preview" />
      <figcaption className="mt-1 text-xs text-slate-500">
        {credits(benefitAt(curve, 0))} if done at once · {credits(benefitAt(curve, horizon))} after {seconds(horizon)}
      </figcaption>
    </figure>
  );
}

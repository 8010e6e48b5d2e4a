"use client";
import { credits, relative, time } from "@/lib/format";
import { describeReason, reasonsOf } from "@/lib/reasons";
import { Badge, cx } from "./ui";

export interface DecisionRecord {
  outcome: string;
  reasons?: unknown;
  completionAt?: string | number | null;
  price?: number | null;
  priceParts?: { producerPayments: number; congestion: number; fee: number } | null;
  terms?: Terms | null;
}

/** What the market tells a consumer of the money beside the price (see the Market Manager's jobs.ts). */
interface Terms {
  pricing?: "posted" | "bid";
  feeFraction?: number;
  failedRunsCharged?: boolean;
  maxAttempts?: number;
  payCapMultiple?: number;
  penaltyCap?: number | null;
  penaltyVoidIfWorkOver?: number | null;
}

/** The terms in words: failed runs are charged, how often a task is tried, and a penalty's limits. */
function termsInWords(t: Terms): string[] {
  const out: string[] = [];
  if (t.failedRunsCharged) {
    out.push(
      `Producer time is charged whether a run succeeds or fails (each run paid at most ${t.payCapMultiple ?? "a few"} times its expected time); ` +
        `a task is tried at most ${t.maxAttempts ?? "a few"} times before the job fails.`,
    );
  }
  if (t.penaltyCap != null) {
    out.push(
      `If the job finishes late the market pays at most ${credits(t.penaltyCap)} in penalty (the price), ` +
        `and nothing if the tasks' measured work is over ${t.penaltyVoidIfWorkOver ?? 2} times the estimate given.`,
    );
  } else if (t.penaltyVoidIfWorkOver != null) {
    out.push("A lateness penalty is paid up to the job's price, and not if the tasks' measured work is well over the estimate given.");
  }
  return out;
}

const HEADLINES: Record<string, string> = {
  admitted: "Admitted: the market will run this job.",
  delayed: "Delayed: not worth running right now; the market will ask again when capacity changes.",
  rejected: "Rejected: the market will not run this job.",
};

const FRAMES: Record<string, string> = {
  admitted: "border-emerald-200 bg-emerald-50",
  delayed: "border-amber-200 bg-amber-50",
  rejected: "border-rose-200 bg-rose-50",
};

export function asDecision(value: unknown): DecisionRecord | null {
  if (typeof value !== "object" || value === null) return null;
  const outcome = (value as { outcome?: unknown }).outcome;
  return typeof outcome === "string" ? (value as DecisionRecord) : null;
}

/** What the price is made of: what producers will be paid, the congestion the job adds, the market's fee. */
function PriceParts({ parts, terms, price }: { parts: NonNullable<DecisionRecord["priceParts"]>; terms: Terms | null; price: number }) {
  if (terms?.pricing === "bid") {
    return <p className="mt-3 text-xs text-slate-600">Pay as bid: you are charged your benefit at completion ({credits(price)} if it completes as planned).</p>;
  }
  return (
    <p className="mt-3 text-xs text-slate-600" data-testid="price-parts">
      The price is what the market expects to pay producers ({credits(parts.producerPayments)}), the congestion your job adds to their machines
      ({credits(parts.congestion)}) and the market&apos;s fee ({credits(parts.fee)}); it is never more than your benefit at completion.
    </p>
  );
}

/**
 * The market's answer (a quote or a decision) with its reasons in words. On a job's page (`quoted`)
 * its completion time is what was quoted: the page's live estimate is shown elsewhere.
 */
export function DecisionView({ decision, title, testId, quoted }: { decision: DecisionRecord; title: string; testId?: string; quoted?: boolean }) {
  const reasons = reasonsOf(decision);
  return (
    <section aria-label={title} data-testid={testId} className={cx("rounded-xl border p-5", FRAMES[decision.outcome] ?? "border-slate-200 bg-white")}>
      <div className="flex flex-wrap items-center gap-3">
        <h3 className="text-sm font-semibold uppercase tracking-wide text-slate-600">{title}</h3>
        <Badge value={decision.outcome} testId="decision-outcome" />
      </div>
      <p className="mt-2 font-medium text-slate-900">{HEADLINES[decision.outcome] ?? decision.outcome}</p>
      {decision.outcome === "admitted" ? (
        <dl className="mt-3 grid grid-cols-2 gap-3 text-sm sm:max-w-md">
          <div>
            <dt className="text-slate-600">Price</dt>
            <dd className="font-semibold text-slate-900" data-testid="decision-price">
              {credits(decision.price ?? null)}
            </dd>
          </div>
          <div>
            <dt className="text-slate-600">{quoted ? "Quoted completion" : "Expected completion"}</dt>
            <dd className="font-semibold text-slate-900" data-testid="decision-completion">
              {decision.completionAt != null ? (quoted ? time(decision.completionAt) : `${time(decision.completionAt)} (${relative(decision.completionAt)})`) : "—"}
            </dd>
          </div>
        </dl>
      ) : null}
      {decision.outcome === "admitted" && decision.priceParts ? <PriceParts parts={decision.priceParts} terms={decision.terms ?? null} price={decision.price ?? 0} /> : null}
      {decision.terms && decision.outcome !== "rejected" ? (
        <ul className="mt-3 space-y-1 text-xs text-slate-600" aria-label="Terms" data-testid="decision-terms">
          {termsInWords(decision.terms).map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      ) : null}
      {reasons.length > 0 ? (
        <ul className="mt-3 list-disc space-y-1 pl-5 text-sm text-slate-700" aria-label="Reasons">
          {reasons.map((r, i) => (
            <li key={i}>{describeReason(r)}</li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

"use client";
import { credits, relative, time } from "@/lib/format";
import { describeReason, type MarketReason } from "@/lib/reasons";
import { Badge, cx } from "./ui";

export interface DecisionRecord {
  outcome: string;
  /** The market's reasons, as its vocabulary types them (the API checks them against it). */
  reasons: MarketReason[];
  completionAt?: string | number | null;
  price?: number | null;
  priceParts?: { producerPayments: number; congestion: number; fee: number } | null;
  terms?: Terms | null;
  /** A quote's: what a submission would hold in escrow, of the consumer's balance now. */
  escrow?: number | null;
  balance?: number | null;
  /** A quote's: the Market Manager that made the offer, and with several, every manager's offer compared. */
  manager?: string;
  offers?: { manager: string; outcome: string; price: number | null }[];
  /** A quote's, when no one manager admits the whole job now: its tasks split across managers, each part with its price. */
  split?: { parts: SplitPart[] } | null;
}

export interface SplitPart {
  manager: string;
  fromTask: number;
  tasks: number;
  price?: number;
}

/** What a submission names to take the quote shown: its split, or the manager that made it. */
export function quoteChoice(decision: DecisionRecord | undefined): { split?: { manager: string; fromTask: number; tasks: number }[]; manager?: string } {
  if (decision?.split) return { split: decision.split.parts.map(({ manager, fromTask, tasks }) => ({ manager, fromTask, tasks })) };
  return decision?.manager ? { manager: decision.manager } : {};
}

/** A job split across managers: which manager runs which tasks, for how much. */
function SplitParts({ parts }: { parts: SplitPart[] }) {
  return (
    <div className="mt-3 text-xs text-slate-600" data-testid="quote-split">
      <p>No one Market Manager can run the whole job in time; {parts.length} run a part each, and you pay the sum:</p>
      <ul className="mt-1 space-y-0.5" aria-label="Parts">
        {parts.map((p) => (
          <li key={p.fromTask} data-testid="quote-part">
            {p.manager}: tasks {p.fromTask} to {p.fromTask + p.tasks - 1}
            {p.price != null ? `, ${credits(p.price)}` : ""}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** With several Market Managers, which one made the offer shown, and what the others offered. */
function ManagerOffers({ manager, offers }: { manager: string; offers: NonNullable<DecisionRecord["offers"]> }) {
  return (
    <div className="mt-3 text-xs text-slate-600" data-testid="quote-manager">
      <p>
        Best of {offers.length} Market Managers: offered by <span className="font-semibold text-slate-900">{manager}</span>, which takes the job if you submit it
        now.
      </p>
      <ul className="mt-1 space-y-0.5" aria-label="Offers">
        {offers.map((o) => (
          <li key={o.manager} data-testid="quote-offer">
            {o.manager}: {o.outcome === "admitted" ? credits(o.price) : o.outcome}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** What the market tells a consumer of the money beside the price (see the Market Manager's jobs.ts). */
interface Terms {
  pricing?: "posted" | "bid";
  feeFraction?: number;
  pieceRatesFixedAtLease?: boolean;
  failedRunsPaidWhenReproduced?: boolean;
  maxAttempts?: number;
  confirmedFailureLimit?: number;
  estimateTolerance?: number;
  maxSpend?: number | null;
  latenessRelief?: string;
}

/** The terms in words: what the consumer pays, for failures, and for lateness. */
function termsInWords(t: Terms): string[] {
  const out: string[] = [];
  if (t.pricing === "posted") {
    out.push(
      `You pay the quoted price while the tasks' measured work stays within ${t.estimateTolerance ?? 1.25}x your estimate; ` +
        `retries, lost leases and slow machines are the market's cost. If the work turns out larger, the charge follows it, never past ` +
        `${t.maxSpend != null ? credits(t.maxSpend) : "the price"}.`,
    );
  }
  if (t.failedRunsPaidWhenReproduced) {
    out.push(
      `A failed run is paid only when a producer of another account reproduces the same failure; a task is tried at most ${t.maxAttempts ?? 3} times, ` +
        `and the job stops after ${t.confirmedFailureLimit ?? 3} tasks fail that way.`,
    );
  }
  if (t.latenessRelief) {
    out.push("If the job finishes late, the charge falls by what the late producers forfeit and by the market's own downtime, up to the benefit lost; lateness no one caused is not relieved.");
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

/** A job's stored decision (its outcome and reasons checked by the API) as the view reads it. */
export function asDecision(value: { outcome: string; reasons: MarketReason[] } | null): DecisionRecord | null {
  return value as DecisionRecord | null;
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

/** A refusal for want of credits: the market would run the job, but the balance cannot escrow it. */
function shortOfCredits(decision: DecisionRecord) {
  const short = decision.outcome === "rejected" ? decision.reasons.find((r) => r.code === "insufficient-credits") : undefined;
  if (!short) return null;
  return { price: short.price ?? null, needed: short.needed, balance: short.balance ?? null, missing: short.missing ?? null };
}

/**
 * The market's answer (a quote or a decision) with its reasons in words. On a job's page (`quoted`)
 * its completion time is what was quoted: the page's live estimate is shown elsewhere.
 */
export function DecisionView({ decision, title, testId, quoted }: { decision: DecisionRecord; title: string; testId?: string; quoted?: boolean }) {
  const reasons = decision.reasons;
  const short = shortOfCredits(decision);
  return (
    <section
      aria-label={title}
      data-testid={testId}
      className={cx("rounded-xl border p-5", short ? FRAMES.delayed : (FRAMES[decision.outcome] ?? "border-slate-200 bg-white"))}
    >
      <div className="flex flex-wrap items-center gap-3">
        <h3 className="text-sm font-semibold uppercase tracking-wide text-slate-600">{title}</h3>
        <Badge value={short ? "not enough credits" : decision.outcome} testId="decision-outcome" />
      </div>
      <p className="mt-2 font-medium text-slate-900" data-testid="decision-headline">
        {short ? "Not enough credits: the market would run this job, but your balance cannot hold its escrow." : (HEADLINES[decision.outcome] ?? decision.outcome)}
      </p>
      {short ? (
        <dl className="mt-3 grid grid-cols-3 gap-3 text-sm sm:max-w-md">
          {short.price != null ? (
            <div>
              <dt className="text-slate-500">It would cost</dt>
              <dd className="font-semibold text-slate-900" data-testid="short-price">
                {credits(short.price)}
              </dd>
            </div>
          ) : null}
          <div>
            <dt className="text-slate-500">Escrow needed</dt>
            <dd className="font-semibold text-slate-900">{credits(short.needed)}</dd>
          </div>
          <div>
            <dt className="text-slate-500">Missing</dt>
            <dd className="font-semibold text-rose-700" data-testid="short-missing">
              {credits(short.missing)}
            </dd>
          </div>
        </dl>
      ) : null}
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
          {decision.escrow != null ? (
            <div className="col-span-2">
              <dt className="text-slate-500">Held in escrow while it runs</dt>
              <dd className="font-semibold text-slate-900" data-testid="decision-escrow">
                {credits(decision.escrow)}
                {decision.balance != null ? <span className="font-normal text-slate-600"> of your {credits(decision.balance)}</span> : null}
              </dd>
            </div>
          ) : null}
        </dl>
      ) : null}
      {decision.manager && decision.offers && decision.offers.length > 1 && !decision.split ? <ManagerOffers manager={decision.manager} offers={decision.offers} /> : null}
      {decision.split ? <SplitParts parts={decision.split.parts} /> : null}
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

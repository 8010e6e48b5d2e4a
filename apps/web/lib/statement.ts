// A ledger statement line in words: what moved and why. Like reasons, the API sends the entry's
// kind and its memo as data; this is the one place they become sentences.
import { credits, number, seconds } from "./format";
import type { RouterOutputs } from "./trpc";
import { shortId } from "@cyclemarket/client/job-file";

export type Statement = RouterOutputs["ledger"]["statement"];
export type StatementLine = Statement["lines"][number];

const micro = (value: unknown): number | null => {
  if (typeof value === "number" && Number.isFinite(value)) return value / 1_000_000;
  if (typeof value === "string" && /^-?\d+$/.test(value)) return Number(value) / 1_000_000;
  return null;
};
const field = (memo: unknown, key: string): unknown => (typeof memo === "object" && memo !== null ? (memo as Record<string, unknown>)[key] : undefined);
const numberField = (memo: unknown, key: string): number | null => {
  const v = field(memo, key);
  return typeof v === "number" && Number.isFinite(v) ? v : null;
};
const idOf = (id: unknown): string | null => (typeof id === "string" && id.length > 0 ? shortId(id) : null);

const cameBack = (amount: number) => (amount > 0 ? `; ${credits(amount)} of the escrow came back.` : "; all of the escrow was charged.");

export interface LineWords {
  /** "Escrow for job Monte Carlo pi" */
  what: string;
  /** A second, quieter line with the numbers behind the movement. */
  detail: string | null;
}

/** The line's job by name when the reader owns it (the API names only those); otherwise by its short id. */
export function describeLine(line: StatementLine): LineWords {
  const job = line.jobName ?? (line.jobId ? shortId(line.jobId) : "?");
  const memo = line.memo;
  switch (line.kind) {
    case "grant":
      return { what: "Starting credits", detail: "Given once by the market to every consumer who confirms their email." };
    case "admin-grant": {
      const admin = field(memo, "admin");
      const reason = field(memo, "reason");
      return {
        what: `Credits granted by ${typeof admin === "string" && admin ? admin : "the market's admin"}`,
        detail: typeof reason === "string" && reason ? `Reason: ${reason}` : null,
      };
    }
    case "earnings-transfer":
      return line.account === "consumer"
        ? { what: "Moved from your producer earnings", detail: "Credits your machines earned, now yours to spend on jobs." }
        : { what: "Moved to your consumer balance", detail: "Your earnings, moved to pay for your own jobs." };
    case "escrow":
      return { what: `Escrow for job ${job}`, detail: "What the job can be charged (its quote, or the maxSpend you set), held while it runs; producers' piece rates are paid out of it." };
    case "settlement": {
      const why = field(memo, "why");
      const charge = micro(field(memo, "chargeMicro"));
      if (why === "cancelled" || why === "failed" || why === "escrow-exhausted" || why === "remainder-rejected") {
        const how = why === "cancelled" ? "Cancelled" : why === "failed" ? "Failed" : why === "escrow-exhausted" ? "Stopped at its spending limit" : "Stopped after its pilots";
        return { what: `Settlement of job ${job}`, detail: `${how}: charged the piece rates of the work done (${credits(charge ?? 0)})${cameBack(line.amount)}` };
      }
      const took = numberField(memo, "seconds");
      const fromLate = micro(field(memo, "reliefFromLateMicro")) ?? 0;
      const fromMarket = micro(field(memo, "reliefFromMarketMicro")) ?? 0;
      const terms = field(memo, "terms");
      const how = Array.isArray(terms) ? (terms as { code?: string }[]).map((t) => t.code) : [];
      const rule = how.includes("charged-price")
        ? " (the quoted price)"
        : how.includes("charged-measured-work")
          ? " (its measured work, over the estimate)"
          : how.includes("charged-benefit")
            ? " (its benefit at completion)"
            : "";
      return {
        what: `Settlement of job ${job}`,
        detail:
          `Completed${took != null ? ` after ${seconds(took)}` : ""}` +
          (charge != null ? `: charged ${credits(charge)}${rule}` : "") +
          (fromLate + fromMarket > 0 ? `; ${credits(fromLate + fromMarket)} came off for lateness` : "") +
          (charge != null ? cameBack(line.amount) : "."),
      };
    }
    case "payment": {
      const tasks = numberField(memo, "tasks");
      if (tasks !== null) {
        // A group of reports pays one producer once per job: its tasks' pieces, each fixed at its lease.
        const rates = field(memo, "rates");
        const each = Array.isArray(rates)
          ? (rates as unknown[])
              .map((r) => (Array.isArray(r) && typeof r[1] === "number" && micro(r[0]) !== null ? `${r[1]} at ${credits(micro(r[0])!)}` : null))
              .filter((r): r is string => r !== null)
          : [];
        const ids = field(memo, "machineIds");
        const machines = Array.isArray(ids) ? ids.map(idOf).filter((m): m is string => m !== null) : [];
        return {
          what: tasks === 1 ? `Payment for a task of job ${job}` : `Payment for ${tasks} tasks of job ${job}`,
          detail:
            `Piece rate${tasks === 1 ? "" : "s"} for ${tasks === 1 ? "an accepted result" : `${tasks} accepted results`}, each fixed when its task was leased` +
            (each.length ? ` (${each.join(", ")})` : "") +
            (machines.length ? `, on machine${machines.length === 1 ? "" : "s"} ${machines.join(", ")}` : "") +
            ".",
        };
      }
      const of = field(memo, "of");
      const machine = idOf(field(memo, "machineId"));
      const what = of === "failure" ? "a failed run another producer reproduced" : of === "pilot" ? "a pilot run, for the work the market measured" : "an accepted result";
      return {
        what: `Payment for a task of job ${job}`,
        detail: `Piece rate for ${what}, fixed when the task was leased${machine ? `, on machine ${machine}` : ""}.`,
      };
    }
    case "contract": {
      const machine = idOf(field(memo, "machineId"));
      const from = field(memo, "from");
      const to = field(memo, "to");
      const span = typeof from === "string" && typeof to === "string" ? ` for ${seconds((Date.parse(to) - Date.parse(from)) / 1000)}` : "";
      return { what: "Contract", detail: `Dedicated machine${machine ? ` ${machine}` : ""}: its contract's share${span}, paid for the time it proved available.` };
    }
    default:
      return { what: String(line.kind), detail: null };
  }
}

/** "+12.5 cr" / "−3 cr": a signed amount, credited to the reader when positive. */
export function signedCredits(amount: number): string {
  if (amount === 0) return credits(0);
  return `${amount > 0 ? "+" : "−"}${credits(Math.abs(amount))}`;
}

/**
 * What consumers were charged for a producer's part of its latest settled jobs, and how much of it
 * reached the producer. More than all of it can reach it: the market pays from its own account
 * for runs no consumer is charged for (tasks placed again after a lease ran out).
 */
export function earnedShareWords(charged: number, paid: number): string {
  const start = `On the last jobs you worked on that were settled, consumers were charged ${credits(charged)} for the part your machines ran`;
  const share = number((paid / charged) * 100, 0);
  if (paid <= charged) return `${start}; you were paid ${credits(paid)} of it (${share}%). The rest is the market's congestion charge and fee.`;
  return `${start}; you were paid ${credits(paid)} (${share}% of that): the market paid the difference, for runs no consumer is charged for, such as tasks placed again after a lease ran out.`;
}

// A ledger statement line in words: what moved and why. Like reasons, the API sends the entry's
// kind and its memo as data; this is the one place they become sentences.
import { credits, seconds } from "./format";
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
    case "escrow":
      return { what: `Escrow for job ${job}`, detail: "The job's highest benefit, held while it runs; producers are paid out of it." };
    case "settlement": {
      const why = field(memo, "why");
      const paid = micro(field(memo, "paidToProducersMicro"));
      if (why === "cancelled" || why === "failed" || why === "escrow-exhausted") {
        const how = why === "cancelled" ? "Cancelled" : why === "failed" ? "Failed" : "Stopped when its escrow ran out";
        return { what: `Settlement of job ${job}`, detail: `${how}: charged what producers had been paid (${credits(paid ?? 0)})${cameBack(line.amount)}` };
      }
      const took = numberField(memo, "seconds");
      const charge = micro(field(memo, "chargeMicro"));
      const compensation = micro(field(memo, "compensationMicro")) ?? 0;
      const terms = field(memo, "terms");
      const how = Array.isArray(terms) ? (terms as { code?: string }[]).map((t) => t.code) : [];
      const rule = how.includes("charged-price")
        ? " (the posted price)"
        : how.includes("charged-producer-time")
          ? " (the producer time it used)"
          : how.includes("charged-benefit")
            ? " (its benefit at completion)"
            : "";
      return {
        what: `Settlement of job ${job}`,
        detail:
          `Completed${took != null ? ` after ${seconds(took)}` : ""}` +
          (charge != null ? `: charged ${credits(charge)}${rule}` : "") +
          (paid ? ` (producers were paid ${credits(paid)} of it)` : "") +
          (compensation > 0 ? `; the market paid a lateness penalty of ${credits(compensation)}` : "") +
          (charge != null ? cameBack(line.amount) : "."),
      };
    }
    case "payment": {
      const ran = numberField(memo, "seconds");
      const reported = numberField(memo, "reportedSeconds");
      const failed = field(memo, "failed") === true;
      const machine = idOf(field(memo, "machineId"));
      const capped = ran != null && reported != null && reported > ran + 1e-9 ? ` (reported ${seconds(reported)}, more than the machine's speed allows)` : "";
      return {
        what: `Payment for a task of job ${job}`,
        detail:
          [ran != null ? `${seconds(ran)} of ${failed ? "a failed run" : "successful run time"}${capped}` : null, machine ? `on machine ${machine}` : null].filter(Boolean).join(" ") ||
          null,
      };
    }
    case "contract": {
      const machine = idOf(field(memo, "machineId"));
      const from = field(memo, "from");
      const to = field(memo, "to");
      const span = typeof from === "string" && typeof to === "string" ? ` for ${seconds((Date.parse(to) - Date.parse(from)) / 1000)} of presence` : "";
      return { what: "Contract", detail: `Dedicated machine${machine ? ` ${machine}` : ""}: its contract's share${span}, paid as the market heard it.` };
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

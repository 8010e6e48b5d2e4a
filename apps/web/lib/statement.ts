// A ledger statement line in words: what moved and why. Like reasons, the API sends the entry's
// kind and its memo as data; this is the one place they become sentences.
import { credits, seconds } from "./format";
import type { RouterOutputs } from "./trpc";

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
const shortId = (id: unknown): string | null => (typeof id === "string" && id.length > 0 ? id.slice(0, 8) : null);

const cameBack = (amount: number) => (amount > 0 ? `; ${credits(amount)} of the escrow came back.` : "; all of the escrow was charged.");

export interface LineWords {
  /** "Escrow for job Monte Carlo pi" */
  what: string;
  /** A second, quieter line with the numbers behind the movement. */
  detail: string | null;
}

/** The line's job by name when the reader owns it (the API names only those); otherwise by its short id. */
export function describeLine(line: StatementLine): LineWords {
  const job = line.jobName ?? (line.jobId ? line.jobId.slice(0, 8) : "?");
  const memo = line.memo;
  switch (line.kind) {
    case "grant":
      return { what: "Starting credits", detail: "Given by the market to every new consumer." };
    case "escrow":
      return { what: `Escrow for job ${job}`, detail: "The job's highest benefit, held while it runs." };
    case "settlement": {
      const why = field(memo, "why");
      if (why === "cancelled" || why === "failed") {
        const paid = micro(field(memo, "paidToProducersMicro"));
        return {
          what: `Settlement of job ${job}`,
          detail: `${why === "cancelled" ? "Cancelled" : "Failed"}: charged what producers had been paid (${credits(paid ?? 0)})${cameBack(line.amount)}`,
        };
      }
      const took = numberField(memo, "seconds");
      const benefit = micro(field(memo, "benefitMicro"));
      return {
        what: `Settlement of job ${job}`,
        detail:
          `Completed${took != null ? ` after ${seconds(took)}` : ""}` +
          (benefit != null
            ? benefit < 0
              ? `: the benefit was negative, so the market paid ${credits(-benefit)} on top of the escrow.`
              : `: charged the benefit at that time, ${credits(benefit)}${cameBack(line.amount)}`
            : "."),
      };
    }
    case "payment": {
      const ran = numberField(memo, "seconds");
      const machine = shortId(field(memo, "machineId"));
      return {
        what: `Payment for a task of job ${job}`,
        detail: [ran != null ? `${seconds(ran)} of successful run time` : null, machine ? `on machine ${machine}` : null].filter(Boolean).join(" ") || null,
      };
    }
    case "contract": {
      const machine = shortId(field(memo, "machineId"));
      return { what: "Contract", detail: `Dedicated machine${machine ? ` ${machine}` : ""}: its whole contract price, paid when the market accepted the offer.` };
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

import { TRPCError } from "@trpc/server";
import type { MarketReason } from "@cyclemarket/costbenefit";

/**
 * A refusal with its reason as data: a code of the market's vocabulary and the numbers behind
 * it. Words are rendered at the edge (the web app, the CLI); the message here is a plain fallback
 * for logs and curl.
 */
export type Reason = MarketReason;

export class Refusal extends TRPCError {
  readonly reason: Reason;
  constructor(
    code: "BAD_REQUEST" | "FORBIDDEN" | "NOT_FOUND" | "CONFLICT" | "PAYLOAD_TOO_LARGE" | "PRECONDITION_FAILED" | "TOO_MANY_REQUESTS",
    reason: Reason,
    message: string,
  ) {
    super({ code, message });
    this.reason = reason;
  }
}

export const refuse = {
  badRequest: (reason: Reason, message: string) => new Refusal("BAD_REQUEST", reason, message),
  forbidden: (reason: Reason, message: string) => new Refusal("FORBIDDEN", reason, message),
  notFound: (what: string) => new Refusal("NOT_FOUND", { code: "not-found", what }, `No such ${what}.`),
  conflict: (reason: Reason, message: string) => new Refusal("CONFLICT", reason, message),
  tooLarge: (reason: Reason, message: string) => new Refusal("PAYLOAD_TOO_LARGE", reason, message),
  /** A limit was reached: the reason names it and says when to retry (the response carries Retry-After). */
  tooMany: (reason: Extract<Reason, { code: "limit-reached" }>, message: string) => new Refusal("TOO_MANY_REQUESTS", reason, message),
};

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
    code: "BAD_REQUEST" | "FORBIDDEN" | "NOT_FOUND" | "CONFLICT" | "PAYLOAD_TOO_LARGE" | "PRECONDITION_FAILED" | "TOO_MANY_REQUESTS" | "SERVICE_UNAVAILABLE" | "CLIENT_CLOSED_REQUEST",
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
  /** The market cannot take the call now (its queue is full): 503 with Retry-After; try again then. */
  busy: (reason: Extract<Reason, { code: "market-busy" }>, message: string) => new Refusal("SERVICE_UNAVAILABLE", reason, message),
  /** The caller went away before its turn: nobody hears this answer, and nothing was done. */
  gone: () => new Refusal("CLIENT_CLOSED_REQUEST", { code: "client-gone" }, "The client closed the request before the market reached it; nothing was done."),
};

/** A reason written where nothing else types it (a JSON column): the literal is checked against the vocabulary. */
export const reasonOf = (reason: Reason): Reason => reason;

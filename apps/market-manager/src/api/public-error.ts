import type { TRPCDefaultErrorShape, TRPCError } from "@trpc/server";
import { z } from "zod";
import { MarketReason } from "@cyclemarket/costbenefit";
import { Refusal, type Reason } from "./errors.ts";

/**
 * What a caller is told of an error: its code, a message and the reason as data, with the request
 * id that finds the rest in the market's log. Never a stack or a file path: those stay in the log.
 */
export function publicError(shape: TRPCDefaultErrorShape, error: TRPCError, requestId: string | null) {
  const { stack: _stack, ...data } = shape.data;
  const refusal = error instanceof Refusal ? error : error.cause instanceof Refusal ? error.cause : null;
  const issues = error.cause instanceof z.ZodError ? error.cause.issues.map((i) => ({ path: i.path.map(String), message: i.message })) : null;
  let message = shape.message;
  let reason: Reason | null = refusal?.reason ?? null;
  if (issues) {
    // The field and its limit, in the words of the schema (zod's own message is a JSON dump).
    message = issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
    reason = { code: "invalid-input", issues };
  } else if (error.code === "INTERNAL_SERVER_ERROR" && databaseAway(error)) {
    // Not a fault of the request: the page says it is reconnecting and asks again by itself.
    message = `The market's database cannot be reached right now; try again shortly (request ${requestId ?? "unknown"}).`;
    reason = { code: "database-unavailable", requestId };
  } else if (error.code === "INTERNAL_SERVER_ERROR") {
    // A database or programming error: its text may quote SQL, a query or a source line.
    message = `The market could not complete this request (request ${requestId ?? "unknown"}).`;
    reason = { code: "internal-error", requestId };
  }
  return { ...shape, message, data: { ...data, reason: publicReason(reason, requestId), zodIssues: issues, requestId } };
}

/**
 * The reason as the vocabulary types it: the API's contract with the web app, the SDK and the CLI.
 * A reason outside it is the market's own fault, answered as one (and a test's refusal fails).
 */
export function publicReason(reason: Reason | null, requestId: string | null): Reason | null {
  if (reason === null) return null;
  const checked = MarketReason.safeParse(reason);
  return checked.success ? checked.data : { code: "internal-error", requestId };
}

const DATABASE_AWAY_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "57P01", "57P02", "57P03", "08000", "08001", "08003", "08006", "P1001", "P1002", "P1017"]);
const DATABASE_AWAY_TEXT = /ECONNREFUSED|ECONNRESET|Connection terminated|terminating connection|Can't reach database|server closed the connection|database system is (starting up|shutting down)|timeout exceeded when trying to connect|Client has encountered a connection error/i;

/** Whether an error (or anything that caused it) says the database could not be reached. */
export function databaseAway(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && DATABASE_AWAY_CODES.has(code)) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === "string" && DATABASE_AWAY_TEXT.test(message)) return true;
  }
  return false;
}

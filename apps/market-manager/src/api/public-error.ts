import type { TRPCDefaultErrorShape, TRPCError } from "@trpc/server";
import { z } from "zod";
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
  } else if (error.code === "INTERNAL_SERVER_ERROR") {
    // A database or programming error: its text may quote SQL, a query or a source line.
    message = `The market could not complete this request (request ${requestId ?? "unknown"}).`;
    reason = { code: "internal-error", requestId };
  }
  return { ...shape, message, data: { ...data, reason, zodIssues: issues, requestId } };
}

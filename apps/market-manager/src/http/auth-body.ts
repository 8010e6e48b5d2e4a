import { z } from "zod";
import { nameText, storableText } from "@cyclemarket/worker-runtime";
import { NewPassword, PASSWORD_MAX_LENGTH, passwordProblem } from "../auth/password-policy.ts";

// What the auth library's routes may be sent, checked before it sees them: every string it
// would store bounded and storable, and a new password held to the policy. Fields the library
// knows and these schemas do not name pass through, still as storable text.

/** RFC 5321: 64 characters before the @, 254 in all. */
const Email = storableText(254, "An email address")
  .pipe(z.email("Not an email address."))
  .refine((e) => e.split("@")[0]!.length <= 64, "The part of an email address before the @ is at most 64 characters.");
const Name = nameText(100, "A name");
const Password = storableText(PASSWORD_MAX_LENGTH, "A password");

const anyText = storableText(2048, "A field");
const Rest = z.record(z.string(), z.union([anyText, z.boolean(), z.number(), z.null()]));

const withPolicy = <T extends z.ZodType>(schema: T, field: "password" | "newPassword") =>
  schema.superRefine((body, ctx) => {
    const b = body as Record<string, unknown>;
    const problem = typeof b[field] === "string" ? passwordProblem(b[field], typeof b.email === "string" ? b.email : undefined) : null;
    if (problem) ctx.addIssue({ code: "custom", path: [field], message: problem });
  });

const ROUTES: Record<string, z.ZodType> = {
  "/sign-up/email": withPolicy(z.looseObject({ name: Name, email: Email, password: NewPassword }), "password"),
  "/sign-in/email": z.looseObject({ email: Email, password: Password }),
  "/update-user": z.looseObject({ name: Name.optional() }),
  "/change-password": withPolicy(z.looseObject({ currentPassword: Password, newPassword: NewPassword }), "newPassword"),
  "/reset-password": withPolicy(z.looseObject({ newPassword: NewPassword }), "newPassword"),
  "/change-email": z.looseObject({ newEmail: Email }),
  "/send-verification-email": z.looseObject({ email: Email }),
  "/request-password-reset": z.looseObject({ email: Email }),
};

export type AuthBodyCheck = { ok: true } | { ok: false; issues: { path: string[]; message: string }[] };

/** `route` is the path under /api/auth; `body` the parsed JSON (undefined when there was none). */
export function checkAuthBody(route: string, body: unknown): AuthBodyCheck {
  if (body === undefined) return { ok: true };
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { ok: false, issues: [{ path: [], message: "The body must be a JSON object." }] };
  const schema = ROUTES[route];
  const results = [schema?.safeParse(body), Rest.safeParse(body)];
  const issues = results.flatMap((r) => (r && !r.success ? r.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) : []));
  return issues.length ? { ok: false, issues } : { ok: true };
}

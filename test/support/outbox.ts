// The market's development outbox (one JSON line per mail, beside its data): where a test finds
// the verification link a new user was mailed, as a person finds it in their inbox.
import { existsSync, readFileSync } from "node:fs";

/** The newest verification link mailed to `email`. */
export function verificationLink(outbox: string, email: string): string {
  const mails = existsSync(outbox)
    ? readFileSync(outbox, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as { to: string; link?: string })
    : [];
  const link = mails.filter((m) => m.to === email && m.link).pop()?.link;
  if (!link) throw new Error(`no verification mail for ${email} in ${outbox}`);
  return link;
}

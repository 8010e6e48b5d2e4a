import { z } from "zod";
import { storableText } from "@cyclemarket/worker-runtime";

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 128;

// A short list of the passwords tried first by anyone guessing; the length and variety rules
// below already refuse most of the rest.
const COMMON = new Set(
  ["password", "password1", "password123", "passw0rd", "1234567890", "0123456789", "qwertyuiop", "qwerty123", "iloveyou", "letmein", "welcome", "admin", "cyclemarket"].map((p) =>
    p.toLowerCase(),
  ),
);

/** The password a new account (or a changed password) must have; the reason is said in words. */
export function passwordProblem(password: string, email?: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `A password has at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > PASSWORD_MAX_LENGTH) return `A password has at most ${PASSWORD_MAX_LENGTH} characters.`;
  if (password.trim().length === 0) return "A password cannot be only spaces.";
  if (new Set(password).size < 5) return "A password needs at least 5 different characters.";
  const lower = password.toLowerCase();
  const base = lower.replace(/[^a-z]+/g, "");
  if (COMMON.has(lower) || COMMON.has(base)) return "That password is one of the first anyone would guess.";
  const local = email?.toLowerCase().split("@")[0] ?? "";
  if (local.length >= 3 && lower.includes(local)) return "A password cannot contain your email address.";
  return null;
}

export const NewPassword = storableText(PASSWORD_MAX_LENGTH, "A password");

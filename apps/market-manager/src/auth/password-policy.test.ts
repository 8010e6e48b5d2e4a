import { describe, expect, it } from "vitest";
import { passwordProblem } from "./password-policy.ts";

describe("password policy", () => {
  it("refuses short, blank, repetitive, common and self-naming passwords", () => {
    expect(passwordProblem("short")).toMatch(/at least 10/);
    expect(passwordProblem(" ".repeat(12))).toMatch(/spaces/);
    expect(passwordProblem("aaaaabbbbbbb")).toMatch(/different/);
    expect(passwordProblem("Password123")).toMatch(/guess/);
    expect(passwordProblem("alice-is-great", "alice@example.test")).toMatch(/email/);
    expect(passwordProblem("x".repeat(129))).toMatch(/at most 128/);
  });

  it("accepts a passphrase", () => {
    expect(passwordProblem("correct horse battery", "bob@example.test")).toBeNull();
  });
});

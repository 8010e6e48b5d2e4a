import { describe, expect, it } from "vitest";
import { nameText, storableText } from "./text.ts";

describe("text PostgreSQL can store", () => {
  it("refuses NUL, lone surrogates and over-long text, naming the limit", () => {
    const arg = storableText(10, "An argument");
    expect(arg.safeParse("ok é 😀").success).toBe(true);
    expect(arg.safeParse("a\u0000b").error?.issues[0]?.message).toMatch(/NUL/);
    expect(arg.safeParse("a\uD800b").error?.issues[0]?.message).toMatch(/Unicode/);
    expect(arg.safeParse("\uDC00").success).toBe(false);
    expect(arg.safeParse("x".repeat(11)).error?.issues[0]?.message).toBe("An argument is at most 10 characters.");
  });

  it("names: trimmed, not empty, no control characters", () => {
    const name = nameText(5);
    expect(name.parse("  ab  ")).toBe("ab");
    expect(name.safeParse("   ").success).toBe(false);
    expect(name.safeParse("a\nb").success).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { TRPCClientError } from "@trpc/client";
import { isOutage } from "./outage";
import { describeError } from "./reasons";

describe("an outage", () => {
  it("is a failure with no answer from the market, or an answer that says its database is away", () => {
    expect(isOutage(new TRPCClientError("Unable to transform response from server"))).toBe(true);
    expect(isOutage(new TypeError("Failed to fetch"))).toBe(true);
    expect(isOutage(new Error("stream: "))).toBe(true);
    expect(isOutage({ message: "x", data: { code: "INTERNAL_SERVER_ERROR", httpStatus: 500, reason: { code: "database-unavailable" } } })).toBe(true);
    expect(isOutage({ message: "bad gateway", data: { httpStatus: 502 } })).toBe(true);
  });

  it("is not a refusal, which asking again will not change", () => {
    expect(isOutage({ message: "no", data: { code: "FORBIDDEN", httpStatus: 403, reason: { code: "not-your-machine" } } })).toBe(false);
    expect(isOutage({ message: "bug", data: { code: "INTERNAL_SERVER_ERROR", httpStatus: 500, reason: { code: "internal-error" } } })).toBe(false);
    expect(isOutage(null)).toBe(false);
  });

  it("never puts the library's words in front of a person", () => {
    for (const raw of ["Unable to transform response from server", "stream: ", "fetch failed"]) {
      const words = describeError(new TRPCClientError(raw));
      expect(words).not.toContain(raw.trim());
      expect(words).toContain("reconnecting");
    }
  });
});

import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { preparedParameter } from "./array-literal.ts";

// The driver's own conversion, which every other parameter still goes through.
const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils.js") as { prepareValue: (value: unknown) => unknown };

describe("a journal statement's array parameter", () => {
  it("is sent as the very literal the driver would send, whatever its text holds", () => {
    const element = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.constantFrom("", "NULL", "null", " padded ", "a,b", "{braces}", 'say "hi"', "back\\slash", '\\"', "é😀"),
      fc.uuid(),
      fc.base64String(),
      fc.json(),
      fc.integer(),
      fc.double(),
      fc.bigInt(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
    );
    fc.assert(
      fc.property(fc.array(element, { maxLength: 20 }), (values) => {
        expect(preparedParameter(values)).toBe(prepareValue(values));
      }),
      { numRuns: 2000 },
    );
  });

  it("is the same literal for arrays of one kind, as a group's ids, outputs and amounts are", () => {
    const arrays = fc.oneof(
      fc.array(fc.uuid(), { maxLength: 50 }),
      fc.array(fc.base64String(), { maxLength: 50 }),
      fc.array(fc.string({ unit: "binary" }), { maxLength: 50 }),
      fc.array(fc.integer(), { maxLength: 50 }),
      fc.array(fc.double(), { maxLength: 50 }),
      fc.array(fc.bigInt(), { maxLength: 50 }),
      fc.array(fc.boolean(), { maxLength: 50 }),
      fc.array(fc.oneof(fc.uuid(), fc.constant(null)), { maxLength: 50 }),
    );
    fc.assert(
      fc.property(arrays, (values) => {
        expect(preparedParameter(values)).toBe(prepareValue(values));
      }),
      { numRuns: 2000 },
    );
  });

  it("leaves to the driver what it does not write itself", () => {
    const bytes = [Buffer.from("ab")];
    const nested = [["a"], ["b"]];
    const dates = [new Date(0)];
    for (const value of [bytes, nested, dates, "text", 7, null, { a: 1 }]) expect(preparedParameter(value)).toBe(value);
  });
});

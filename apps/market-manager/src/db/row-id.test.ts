import { describe, expect, it } from "vitest";
import { validate, version } from "uuid";
import { rowId } from "./row-id.ts";

describe("rowId", () => {
  it("gives distinct version 7 UUIDs that grow in the order they were made, many to a millisecond", () => {
    const ids = Array.from({ length: 100_000 }, () => rowId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of [ids[0]!, ids[50_000]!, ids.at(-1)!]) {
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
    }
    // Text order is what PostgreSQL's indexes see.
    const outOfOrder = ids.findIndex((id, i) => i > 0 && !(ids[i - 1]! < id));
    expect(outOfOrder).toBe(-1);
  });

  it("carries the time it was made in its first 48 bits", () => {
    const before = Date.now();
    const id = rowId();
    const ms = parseInt(id.replace(/-/g, "").slice(0, 12), 16);
    // At or after now: a burst of ids may run a few milliseconds ahead of the clock, never behind.
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThan(before + 60_000);
  });
});

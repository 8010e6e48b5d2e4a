import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { stringify, v7, validate, version } from "uuid";
import { shortId } from "@cyclemarket/client/job-file";
import { rowId, uuidText } from "./row-id.ts";

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

  it("writes an id's bytes as the uuid package's text, byte for byte", () => {
    // Any bytes with a version 7 id's version and variant bits (the package checks them).
    const asV7 = (bytes: Uint8Array) => ((bytes[6] = (bytes[6]! & 0x0f) | 0x70), (bytes[8] = (bytes[8]! & 0x3f) | 0x80), bytes);
    for (let i = 0; i < 10_000; i++) {
      const bytes = asV7(randomBytes(16));
      expect(uuidText(bytes)).toBe(stringify(bytes));
    }
    for (const fill of [0x00, 0xff, 0x0f, 0xf0]) expect(uuidText(asV7(new Uint8Array(16).fill(fill)))).toBe(stringify(asV7(new Uint8Array(16).fill(fill))));
    // And a version 7 id of a given time, counter and randomness as the package writes it whole.
    const random = randomBytes(16);
    expect(uuidText(v7({ msecs: 1_795_000_000_000, seq: 0x7fffffff, random }, new Uint8Array(16)))).toBe(v7({ msecs: 1_795_000_000_000, seq: 0x7fffffff, random }));
  });
});

describe("the short id of a row id", () => {
  it("tells apart ids made in the same millisecond, whose first digits are alike", () => {
    const ids = Array.from({ length: 1000 }, () => rowId());
    expect(new Set(ids.map((id) => id.slice(0, 8))).size).toBeLessThan(10);
    expect(new Set(ids.map(shortId)).size).toBe(1000);
    expect(shortId(ids[0]!)).toMatch(/^[0-9a-f]{8}$/);
  });

  it("keeps a task copy's number, and leaves what is already short as it is", () => {
    expect(shortId("01a22323-1d3d-71b4-a678-06b1b35f3a9c~2")).toBe("b35f3a9c~2");
    expect(shortId("abc")).toBe("abc");
  });
});

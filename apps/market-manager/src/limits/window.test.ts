import { describe, expect, it } from "vitest";
import { openCounter, windowCounter } from "./window.ts";

describe("quota windows", () => {
  it("allows max calls per window per key, then says when to retry", () => {
    let now = 0;
    const hit = windowCounter(2, 60_000, () => now);
    expect(hit("a")).toBeNull();
    expect(hit("a")).toBeNull();
    expect(hit("b")).toBeNull();
    now = 15_000;
    expect(hit("a")).toBe(45);
    now = 60_000;
    expect(hit("a")).toBeNull();
  });

  it("holds at most max open per key and gives one back once per release", () => {
    const streams = openCounter(2);
    const one = streams.take("m")!;
    expect(streams.take("m")).not.toBeNull();
    expect(streams.take("m")).toBeNull();
    one();
    one();
    expect(streams.count("m")).toBe(1);
    expect(streams.take("m")).not.toBeNull();
  });
});

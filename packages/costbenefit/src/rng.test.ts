import { describe, expect, it } from "vitest";
import { createRng } from "./rng.ts";

describe("createRng", () => {
  it("replays the same sequence from the same seed, and a different one from another seed", () => {
    const a = createRng(42);
    const b = createRng(42);
    const c = createRng(43);
    const sa = Array.from({ length: 20 }, () => a.next());
    const sb = Array.from({ length: 20 }, () => b.next());
    const sc = Array.from({ length: 20 }, () => c.next());
    expect(sa).toEqual(sb);
    expect(sa).not.toEqual(sc);
    for (const x of sa) expect(x >= 0 && x < 1).toBe(true);
  });

  it("forks independent but reproducible streams", () => {
    const r = createRng("seed");
    expect(r.fork(1).next()).toBe(createRng("seed").fork(1).next());
    expect(r.fork(1).next()).not.toBe(r.fork(2).next());
  });

  it("draws integers in range with roughly uniform frequency", () => {
    const r = createRng(7);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 40_000; i++) counts[r.int(4)]!++;
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(400);
  });
});

import { describe, expect, it } from "vitest";
import { createRng } from "../rng.ts";
import { createPvm } from "./round-robin.ts";
import type { ClusterView } from "./paper-policy.ts";

const cluster = (jobs: number[], used: number[]): ClusterView => ({
  speed: [1, 1, 1, 0.665, 0.665, 0.45],
  memoryMb: [64, 64, 64, 32, 32, 24],
  memoryUsed: used,
  tasks: jobs.map((k) => Array.from({ length: k }, (_, i) => i)),
  taskMemory: [],
});

describe("PVM: strict round robin", () => {
  it("places jobs on machines 0, 1, ..., 5, 0, 1 whatever their load or memory", () => {
    const pvm = createPvm();
    const rng = createRng(1);
    // Machine 1 is overloaded and machine 5 is over its memory: round robin does not look.
    const c = cluster([0, 9, 0, 0, 0, 2], [0, 60, 0, 0, 0, 30]);
    const order = Array.from({ length: 8 }, () => pvm.place(c, 4, rng));
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 0, 1]);
  });

  it("never moves a job", () => {
    expect(createPvm().tickSeconds).toBe(0);
  });
});

import { describe, expect, it } from "vitest";
import { createRng } from "../rng.ts";
import { mosixRound, type MosixParameters } from "./mosix.ts";
import type { ClusterView, TickContext } from "./paper-policy.ts";

describe("Mosix with a load vector", () => {
  it("balances by the loads last reported, even when they are stale", () => {
    // Machine 0 holds 8 jobs. Machine 1 is really empty and machine 2 really holds 9, but machine
    // 0's vector still has 10 on machine 1 and 0 on machine 2: it sends its job to machine 2.
    const tasks = [[0, 1, 2, 3, 4, 5, 6, 7], [], [8, 9, 10, 11, 12, 13, 14, 15, 16]];
    const c: ClusterView = { speed: [1, 1, 1], memoryMb: [64, 64, 64], memoryUsed: [8, 0, 9], tasks, taskMemory: new Array(17).fill(1) };
    const moves: [number, number][] = [];
    const ctx: TickContext = { move: (t, to) => moves.push([t, to]), attained: (t) => t, movable: () => true };
    const vectors = [0, 1, 2].map(() => ({ jobs: new Float64Array(3), memoryUsed: new Float64Array(3) }));
    vectors[0]!.jobs[1] = 10;
    // subset 0: no one reports this tick, so the vector is all machine 0 knows.
    const p: MosixParameters = { tickSeconds: 5, subset: 0, threshold: 3, arrival: "random", knowledge: "vector" };
    mosixRound(c, ctx, p, createRng(1), vectors);
    expect(moves[0]).toEqual([7, 2]);
  });
});

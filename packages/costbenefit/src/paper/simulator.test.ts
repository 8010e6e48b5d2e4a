import { describe, expect, it } from "vitest";
import { createRng } from "../rng.ts";
import { createPaperPolicy } from "./create.ts";
import { CALIBRATED_PROFILE } from "./profile.ts";
import { simulatePaper } from "./simulator.ts";
import { paperRun } from "./workload.ts";
import type { PaperPolicy } from "./paper-policy.ts";

const machines = [{ speed: 1, memoryMb: 64 }, { speed: 0.45, memoryMb: 24 }];

describe("the paper's simulator", () => {
  it("gives a lone job on the fastest machine a slowdown of 1, and round robin's second job 1/0.45", () => {
    const jobs = [{ arrivedAt: 0, work: 10, memoryMb: 1 }, { arrivedAt: 100, work: 10, memoryMb: 1 }];
    const r = simulatePaper(createPaperPolicy("pvm", CALIBRATED_PROFILE), machines, jobs, createRng(1));
    expect(r.completed).toBe(2);
    expect(r.slowdownSum).toBeCloseTo(1 + 1 / 0.45, 9);
  });

  it("slows every job on a machine ten times while its memory is over capacity", () => {
    // Two 20 MB jobs on one 24 MB machine: each gets half the CPU, and a tenth of that.
    const jobs = [{ arrivedAt: 0, work: 9, memoryMb: 20 }, { arrivedAt: 0, work: 9, memoryMb: 20 }];
    const small = [{ speed: 1, memoryMb: 24 }];
    const r = simulatePaper(createPaperPolicy("pvm", CALIBRATED_PROFILE), small, jobs, createRng(1));
    expect(r.slowdownMean).toBeCloseTo(2 * 10, 9);
  });

  it("replays a run exactly from its seed", () => {
    const run = paperRun(createRng(5).fork("workload/0"), CALIBRATED_PROFILE);
    const a = simulatePaper(createPaperPolicy("e-mosix", CALIBRATED_PROFILE), run.machines, run.jobs, createRng(9));
    const b = simulatePaper(createPaperPolicy("e-mosix", CALIBRATED_PROFILE), run.machines, run.jobs, createRng(9));
    expect(a).toEqual(b);
    expect(a.completed).toBe(run.jobs.length);
  });
});

describe("the paper's simulator with a migration cost", () => {
  const two = [{ speed: 1, memoryMb: 64 }, { speed: 1, memoryMb: 64 }];
  // Places on machine 0; every second moves each job it may move to the other machine.
  const bouncer = (once: boolean): PaperPolicy => {
    let moved = false;
    return {
      name: "mosix",
      tickSeconds: 1,
      place: () => 0,
      tick(c, ctx) {
        if (once && moved) return;
        for (let m = 0; m < 2; m++) for (const t of [...c.tasks[m]!]) if (ctx.movable(t)) { ctx.move(t, 1 - m); moved = true; }
      },
    };
  };
  it("keeps a moved job on no machine for memory / bandwidth seconds", () => {
    // 1 s on machine 0, 5 s carrying 5 MB at 1 MB/s, then the 9 s left on machine 1: done at 15.
    const jobs = [{ arrivedAt: 0, work: 10, memoryMb: 5 }];
    const r = simulatePaper(bouncer(true), two, jobs, createRng(1), { bandwidthMbPerSecond: 1, minResidenceSeconds: 0 });
    expect(r.migrations).toBe(1);
    expect(r.slowdownMean).toBeCloseTo(1.5, 9);
  });
  it("finishes a job a policy would bounce every tick, once it must stay between moves", () => {
    const jobs = [{ arrivedAt: 0, work: 10, memoryMb: 5 }];
    const r = simulatePaper(bouncer(false), two, jobs, createRng(1), { bandwidthMbPerSecond: 5, minResidenceSeconds: 2 });
    expect(r.completed).toBe(1);
    expect(r.migrations).toBeGreaterThan(2);
  });
});

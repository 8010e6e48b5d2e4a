import { describe, expect, it } from "vitest";
import { createPolicy } from "../policies/policy.ts";
import { createRng } from "../rng.ts";
import { Cluster, THRASH_FACTOR } from "./cluster.ts";
import { EventQueue } from "./event-queue.ts";
import { simulate } from "./simulator.ts";
import { benefitWorkload } from "./workloads/benefit.ts";
import { tpds2000 } from "./workloads/tpds2000.ts";

describe("Cluster (time sharing)", () => {
  it("shares a machine fairly: two equal tasks both finish at twice their length", () => {
    const c = new Cluster([1], [64], 2);
    c.add(0, 0, 10, 1, 0);
    c.add(0, 1, 10, 1, 0);
    expect(c.nextCompletion(0).time).toBeCloseTo(20);
  });

  it("runs ten times slower while memory is over capacity", () => {
    const c = new Cluster([2], [64], 2);
    c.add(0, 0, 10, 40, 0);
    c.add(0, 1, 10, 40, 0);
    expect(c.nextCompletion(0).time).toBeCloseTo((20 / 2) * THRASH_FACTOR);
  });

  it("keeps a task's progress when it migrates", () => {
    const c = new Cluster([1, 1], [64, 64], 1);
    c.add(0, 0, 10, 1, 0);
    expect(c.remove(0, 4)).toBeCloseTo(6);
  });
});

describe("EventQueue", () => {
  it("pops events by time, and in insertion order at equal times", () => {
    const q = new EventQueue();
    for (const [t, a] of [[5, 1], [1, 2], [5, 3], [0, 4], [3, 5]] as const) q.push(t, 0, a);
    const out: number[] = [];
    const ev = { time: 0, kind: 0, arg: 0 };
    while (q.pop(ev)) out.push(ev.arg);
    expect(out).toEqual([4, 2, 5, 1, 3]);
  });
});

describe("simulate", () => {
  const small = (seed: number) => tpds2000(createRng(seed), { durationSeconds: 1500 });

  it("replays a run exactly from its seeds", () => {
    const a = simulate(createPolicy("e-mosix"), small(4), createRng(9));
    const b = simulate(createPolicy("e-mosix"), small(4), createRng(9));
    expect(b).toEqual(a);
    expect(a.completed).toBe(a.jobs);
  });

  it("runs every job of the slowdown study to completion under every baseline", () => {
    const w = small(5);
    for (const name of ["pvm", "e-pvm", "mosix", "e-mosix", "random", "fcfs", "miserly"]) {
      const r = simulate(createPolicy(name), w, createRng(1));
      expect(r.completed, name).toBe(w.jobs.length);
      expect(r.slowdownMean, name).toBeGreaterThanOrEqual(1 - 1e-9);
    }
  });

  it("earns the market more under overload with miserly admission than admitting everything", () => {
    const w = benefitWorkload(createRng(2), 2, { durationSeconds: 3000 });
    const miserly = simulate(createPolicy("miserly"), w, createRng(1));
    const fcfs = simulate(createPolicy("fcfs"), w, createRng(1));
    expect(miserly.rejected + miserly.delayed).toBeGreaterThan(0);
    expect(miserly.profit).toBeGreaterThan(fcfs.profit);
  });

  it("settles at the posted price, never above the benefit, and at b(j, t) under pay-as-bid", () => {
    const w = benefitWorkload(createRng(3), 1, { durationSeconds: 1500 });
    const posted = simulate(createPolicy("miserly"), { ...w, settings: { ...w.settings, pricing: "posted" } }, createRng(1));
    const bid = simulate(createPolicy("miserly"), { ...w, settings: { ...w.settings, pricing: "bid" } }, createRng(1));
    expect(posted.completed).toBeGreaterThan(0);
    expect(posted.charged).toBeLessThan(posted.benefit);
    expect(posted.consumerSurplus).toBeCloseTo(posted.benefit - posted.charged);
    expect(posted.marketProfit).toBeCloseTo(posted.charged - posted.payments);
    expect(posted.welfare).toBeCloseTo(posted.benefit - posted.payments);
    expect(bid.charged).toBeCloseTo(bid.benefit);
    expect(bid.consumerSurplus).toBeCloseTo(0);
  });

  it("decides the same under either pricing rule for every policy but miserly, so the bench settles one run both ways", () => {
    const w = benefitWorkload(createRng(4), 1.5, { durationSeconds: 600 });
    for (const name of ["fcfs", "tickets", "opportunity-cost", "continuous-bid", "reservation"]) {
      const run = (pricing: "posted" | "bid") => simulate(createPolicy(name), { ...w, settings: { ...w.settings, pricing } }, createRng(1));
      const a = run("posted");
      const b = run("bid");
      expect({ ...b, charged: 0, marketProfit: 0, consumerSurplus: 0 }, name).toEqual({ ...a, charged: 0, marketProfit: 0, consumerSurplus: 0 });
      expect(b.charged, name).toBeCloseTo(a.benefit);
    }
  });
});

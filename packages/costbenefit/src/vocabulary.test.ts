import { describe, expect, it } from "vitest";
import { MARKET_REASON_CODES, MarketReason, RunFailure } from "./vocabulary.ts";
import { REASON_SAMPLES } from "./vocabulary-samples.ts";
import { POLICY_NAMES } from "./policies/registry.ts";
import { createPolicy } from "./policies/policy.ts";
import type { Policy } from "./policies/types.ts";
import { createRng } from "./rng.ts";
import { simulate } from "./sim/simulator.ts";
import { benefitWorkload } from "./sim/workloads/benefit.ts";
import { tpds2000 } from "./sim/workloads/tpds2000.ts";
import { decidePilots } from "./pilots.ts";
import { DEFAULT_TERMS, settleJob } from "./settlement.ts";
import { job, market, opp } from "./test-fixtures.ts";

// The vocabulary is strict: every reason's fields are declared, and a field no schema declares is
// refused. These tests hold the engine to it: every reason its policies give over whole simulated
// workloads (admissions, delays, rejections, moves, offers, pilots, settlements) parses.

/** Every `reasons` array anywhere in a policy's answer. */
function reasonsIn(value: unknown, out: unknown[] = [], depth = 0): unknown[] {
  if (depth > 6 || typeof value !== "object" || value === null) return out;
  if (Array.isArray(value)) {
    for (const v of value) reasonsIn(v, out, depth + 1);
    return out;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k === "reasons" && Array.isArray(v)) out.push(...v);
    else reasonsIn(v, out, depth + 1);
  }
  return out;
}

/** The policy with every answer's reasons written down. */
function recording(policy: Policy, seen: unknown[]): Policy {
  const keep = <T>(answer: T): T => (reasonsIn(answer, seen), answer);
  return {
    name: policy.name,
    profile: policy.profile,
    admit: (...a) => keep(policy.admit(...a)),
    quote: (...a) => keep(policy.quote(...a)),
    place: (...a) => keep(policy.place(...a)),
    tick: (...a) => keep(policy.tick(...a)),
    considerDedicatedOffer: (...a) => keep(policy.considerDedicatedOffer(...a)),
  };
}

describe("the market's vocabulary", () => {
  it("has one example of each code, and each parses as the strict schema of its code", () => {
    expect(Object.keys(REASON_SAMPLES).sort()).toEqual([...MARKET_REASON_CODES].sort());
    for (const [code, sample] of Object.entries(REASON_SAMPLES)) {
      expect(sample.code).toBe(code);
      expect(MarketReason.parse(sample)).toEqual(sample);
    }
  });

  it("refuses a field no schema declares, and a declared field under another name", () => {
    for (const sample of Object.values(REASON_SAMPLES)) {
      const extra = MarketReason.safeParse({ ...sample, note: 1 });
      expect(extra.success, sample.code).toBe(false);
      expect(extra.error?.issues[0]).toMatchObject({ code: "unrecognized_keys", keys: ["note"] });
    }
    const { atMost, ...rest } = REASON_SAMPLES["pilot-tasks"];
    expect(MarketReason.safeParse({ ...rest, ceiling: atMost }).success).toBe(false);
    expect(MarketReason.safeParse({ code: "no-such-code" }).success).toBe(false);
  });

  it("names a failed run by the sandbox's failure or the program's exit code, nothing else", () => {
    expect(RunFailure.parse("exit:-1")).toBe("exit:-1");
    expect(RunFailure.parse("trap")).toBe("trap");
    expect(RunFailure.safeParse("exit:").success).toBe(false);
    expect(RunFailure.safeParse("segfault").success).toBe(false);
  });

  it("holds every reason each policy gives over simulated workloads", () => {
    const seen: unknown[] = [];
    for (const name of POLICY_NAMES) {
      simulate(recording(createPolicy(name), seen), tpds2000(createRng(4), { durationSeconds: 1500 }), createRng(1));
      simulate(recording(createPolicy(name), seen), benefitWorkload(createRng(2), 2, { durationSeconds: 1500 }), createRng(1));
    }
    const codes = new Set(seen.map((r) => (r as { code: string }).code));
    // A recording that caught nothing would pass vacuously: the workloads admit, delay and reject.
    expect([...codes]).toEqual(expect.arrayContaining(["profitable", "unprofitable", "max-wait-exceeded"]));
    for (const r of seen) expect(MarketReason.safeParse(r).error?.issues ?? [], JSON.stringify(r)).toEqual([]);
  });

  it("holds the reasons of dedicated offers, pilots and settlements", () => {
    const seen: unknown[] = [];
    const policy = createPolicy("miserly");
    const state = market([opp("a", { pricePerSecond: 0.01 }), opp("b", { pricePerSecond: 0.01 })], { horizonSeconds: 1000 });
    const offer = { id: "d1", owner: "o1", kind: "dedicated" as const, slots: 1, speed: 1, memoryPerSlotMb: 1024, bandwidthBytesPerSecond: 1e6, reputation: 1 };
    for (const [contractPrice, departureAt, budget] of [[0, 3600, 100], [1e9, 3600, 1e12], [0.5, 3600, 0.1], [1, 10, 100]] as const) {
      reasonsIn(policy.considerDedicatedOffer(state, { ...offer, contractPrice, departureAt }, 100, budget), seen);
    }
    const j = job("j", { kind: "constant", value: 100 }, Array.from({ length: 10 }, () => ({})));
    reasonsIn(decidePilots((x) => policy.admit(state, x, 0, createRng(1)), DEFAULT_TERMS, j, 30), seen);
    const settle = { pricing: "posted" as const, price: 10, maxSpend: 20, benefit: 4, benefitWithoutDowntime: 6, contradicted: null, held: [{ producerId: "p", amount: 3, related: false }] };
    for (const s of [settle, { ...settle, contradicted: { charge: 15 } }, { ...settle, pricing: "bid" as const, benefit: -2 }, { ...settle, held: [] }]) reasonsIn(settleJob(s), seen);
    const codes = new Set(seen.map((r) => (r as { code: string }).code));
    expect([...codes]).toEqual(expect.arrayContaining(["offer-accepted", "offer-too-expensive", "offer-expired", "pilot-tasks", "charged-price", "lateness-relief"]));
    for (const r of seen) expect(MarketReason.safeParse(r).error?.issues ?? [], JSON.stringify(r)).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DEFAULT_STANDING_RULES, drawnMachine, spotCheckFraction, spotChecked, standingOf, verifierOf, type StandingFacts } from "./standing.ts";

const DAY = 86_400;
const facts = (f: Partial<StandingFacts> = {}): StandingFacts => ({
  trusted: false, emailConfirmed: true, ageSeconds: 7 * DAY, verified: 0, disagreements: 0, unconfirmedFailures: 0, expiredLeases: 0, forgeries: 0, ...f,
});

describe("a producer account's standing", () => {
  it("a fresh account has none, and is told what raises it", () => {
    const s = standingOf(facts({ emailConfirmed: false, ageSeconds: 60 }));
    expect(s.has).toBe(false);
    expect(s.spotCheck).toBe(1);
    expect(s.steps.map((x) => x.code)).toEqual(["confirm-email", "account-age", "verified-results"]);
  });

  it("is earned by verified results, a confirmed address and age together", () => {
    const need = DEFAULT_STANDING_RULES.verifiedForStanding;
    expect(standingOf(facts({ verified: need - 1 })).has).toBe(false);
    expect(standingOf(facts({ verified: need })).has).toBe(true);
    expect(standingOf(facts({ verified: need, emailConfirmed: false })).has).toBe(false);
    expect(standingOf(facts({ verified: need, ageSeconds: DAY / 2 })).has).toBe(false);
  });

  it("falls on disagreement, unconfirmed failures and expired leases", () => {
    const need = DEFAULT_STANDING_RULES.verifiedForStanding;
    expect(standingOf(facts({ verified: need, disagreements: 1 })).has).toBe(false);
    expect(standingOf(facts({ verified: need, unconfirmedFailures: 1 })).has).toBe(false);
    expect(standingOf(facts({ verified: need, expiredLeases: 2 })).has).toBe(false);
  });

  it("is lost for good when caught forging", () => {
    const s = standingOf(facts({ verified: 100_000, forgeries: 1 }));
    expect(s).toMatchObject({ has: false, score: 0, forged: true });
  });

  it("the market's own accounts have it from the start and are not spot-checked", () => {
    expect(standingOf(facts({ trusted: true, emailConfirmed: false, ageSeconds: 0 }))).toMatchObject({ has: true, spotCheck: 0 });
  });

  it("more verified results never lower standing; more penalties never raise it", () => {
    fc.assert(
      fc.property(fc.nat(500), fc.nat(500), fc.nat(20), fc.nat(20), (a, b, d, e) => {
        const lo = standingOf(facts({ verified: Math.min(a, b), disagreements: d, expiredLeases: e }));
        const hi = standingOf(facts({ verified: Math.max(a, b), disagreements: d, expiredLeases: e }));
        expect(hi.score).toBeGreaterThanOrEqual(lo.score);
        expect(hi.spotCheck).toBeLessThanOrEqual(lo.spotCheck);
        const worse = standingOf(facts({ verified: a, disagreements: d + 1, expiredLeases: e }));
        expect(worse.score).toBeLessThanOrEqual(standingOf(facts({ verified: a, disagreements: d, expiredLeases: e })).score);
      }),
    );
  });

  it("spot-checks every result at first, then fewer, never below the floor", () => {
    const r = DEFAULT_STANDING_RULES;
    expect(spotCheckFraction(r.spotCheckScale, r)).toBe(1);
    expect(spotCheckFraction(r.spotCheckScale * 4, r)).toBeCloseTo(0.25);
    expect(spotCheckFraction(1e9, r)).toBe(r.spotCheckFloor);
  });

  it("the spot-check draw is deterministic from the seed and checks about the stated fraction", () => {
    expect(spotChecked("seed", "task-1", 0.3)).toBe(spotChecked("seed", "task-1", 0.3));
    let n = 0;
    for (let i = 0; i < 20_000; i++) if (spotChecked("seed", `task-${i}`, 0.1)) n++;
    expect(n / 20_000).toBeGreaterThan(0.09);
    expect(n / 20_000).toBeLessThan(0.11);
    // Another seed checks other tasks: a producer who learns one market's choices learns nothing of another's.
    let same = 0;
    for (let i = 0; i < 2000; i++) if (spotChecked("seed", `t${i}`, 0.5) === spotChecked("other", `t${i}`, 0.5)) same++;
    expect(same).toBeLessThan(1150);
  });

  it("one organisation's confirmed domain is one verifier; common mail providers and unconfirmed addresses are per account", () => {
    expect(verifierOf({ id: "a", email: "x@corp.test", emailConfirmed: true })).toBe("domain:corp.test");
    expect(verifierOf({ id: "b", email: "y@CORP.test", emailConfirmed: true })).toBe("domain:corp.test");
    expect(verifierOf({ id: "c", email: "z@gmail.com", emailConfirmed: true })).toBe("account:c");
    expect(verifierOf({ id: "d", email: "w@corp.test", emailConfirmed: false })).toBe("account:d");
  });
});

describe("the draw of the machine that checks a result", () => {
  const machines = Array.from({ length: 10 }, (_, i) => `m${i}`);

  it("gives each machine an even share of the checks, whatever order they ask in", () => {
    const wins = new Map<string, number>();
    for (let i = 0; i < 5000; i++) {
      const m = drawnMachine("secret", `task-${i}:2`, i % 2 ? machines : [...machines].reverse())!;
      wins.set(m, (wins.get(m) ?? 0) + 1);
    }
    expect(wins.size).toBe(10);
    for (const n of wins.values()) expect(n).toBeGreaterThan(400);
    for (const n of wins.values()) expect(n).toBeLessThan(600);
  });

  it("moves a copy only when the machine that joins ranks first, and follows the seed", () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 9 }), (copy, n) => {
        const before = drawnMachine("secret", copy, machines.slice(0, n))!;
        const after = drawnMachine("secret", copy, machines.slice(0, n + 1))!;
        expect(after === before || after === machines[n]).toBe(true);
        // A machine leaving that was not drawn changes nothing.
        const others = machines.slice(0, n + 1).filter((m) => m !== after);
        if (others.length > 1) expect(drawnMachine("secret", copy, [after, ...others.slice(1)])).toBe(after);
      }),
    );
    const draws = (seed: string) => Array.from({ length: 50 }, (_, i) => drawnMachine(seed, `t${i}`, machines)).join();
    expect(draws("one")).not.toBe(draws("two"));
    expect(drawnMachine("secret", "t", [])).toBeNull();
  });
});

import { describe, expect, it } from "vitest";
import { createRng } from "../rng.ts";
import { simulateVerification } from "./verification.ts";

describe("the verification simulation", () => {
  it("with no forgers accepts every task and checks some of them", () => {
    const r = simulateVerification({ forgers: 0, producers: 50, tasks: 5000, lifetime: 5000 }, createRng("none"));
    expect(r.accepted).toBe(5000);
    expect(r.forgedAccepted).toBe(0);
    expect(r.replicationOverhead).toBeGreaterThan(1);
    expect(r.replicationOverhead).toBeLessThan(2);
  });

  it("catches forgers that open fresh accounts, and accepts far fewer forged results than they try", () => {
    const r = simulateVerification({ forgers: 0.3, producers: 50, tasks: 20_000, lifetime: 5000 }, createRng("forgers"));
    expect(r.forgeriesCaught).toBeGreaterThan(0);
    expect(r.forgerAccounts).toBeGreaterThan(15);
    // Forgers hold 30% of the places: accepting their results unchecked would pass a few thousand.
    expect(r.forgedAccepted).toBeLessThan(0.01);
  });
});

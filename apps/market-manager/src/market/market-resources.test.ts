// A market's state beside its live state is its own (market-resources.ts): two markets in one
// process share none of it, and no module keeps a map from a market (or its database) to state.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { Market, type ManagerSettings } from "./market.ts";
import type { Database, Db } from "../db/client.ts";
import type { Engine } from "./engine.ts";
import { holdIntake, tasksInIntake } from "../tasks/intake.ts";

const SRC = join(import.meta.dirname, "..");

const newMarket = () =>
  new Market({ db: {} as Db } as Database, {} as Engine, { now: () => Date.now() }, () => {}, { leaseTimeoutMs: 30_000, startingCreditsMicro: 0n, terms: {} as ManagerSettings["terms"], maxDelayMs: 60_000 });

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "generated" ? [] : sources(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("a market's resources", () => {
  it("are its own: tasks one market takes in do not count in another's quota", () => {
    const a = newMarket();
    const b = newMarket();
    const release = holdIntake(a, "ann", 40);
    expect(tasksInIntake(a, "ann")).toBe(40);
    expect(tasksInIntake(b, "ann")).toBe(0);
    release();
    expect(tasksInIntake(a, "ann")).toBe(0);
  });

  it("are not kept in module-level maps keyed by a market or its database", () => {
    const keyed = /^(export )?(const|let) \w+ = new (Weak)?Map<\s*(Market|Db|object)\b/;
    expect("const pools = new WeakMap<Db, pg.Pool>();").toMatch(keyed);
    const found = sources().flatMap((path) =>
      readFileSync(path, "utf8")
        .split("\n")
        .flatMap((line, i) => (keyed.test(line) ? [`${relative(SRC, path)}:${i + 1}: ${line}`] : [])),
    );
    expect(found).toEqual([]);
  });
});

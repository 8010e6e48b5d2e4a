import { describe, expect, it } from "vitest";
import { HeldAnswers, MAX_ENTRIES } from "./held-answers.ts";

describe("HeldAnswers", () => {
  it("asks once for many calls, answers from memory until the entry's time, then asks again once", async () => {
    let now = 0;
    let asked = 0;
    const held = new HeldAnswers<string>(1_000, () => now);
    const ask = async () => (asked++, "holder");
    expect(await Promise.all([held.lookup("t", ask), held.lookup("t", ask), held.lookup("t", ask)])).toEqual(["holder", "holder", "holder"]);
    expect(asked).toBe(1);
    now = 1_000;
    expect(await held.lookup("t", ask)).toBe("holder"); // the old answer, while the new one is asked
    expect(await held.lookup("t", ask)).toBe("holder");
    expect(asked).toBe(2);
  });

  it("keeps the credentials heard from last when full: a fleet's token stays answered from memory", async () => {
    let asked = 0;
    const held = new HeldAnswers<string>(3_600_000, () => 0);
    const ask = (holder: string) => async () => (asked++, holder);
    await held.lookup("fleet", ask("fleet"));
    for (let i = 1; i < MAX_ENTRIES; i++) await held.lookup(`t${i}`, ask(`t${i}`));
    await held.lookup("fleet", ask("fleet")); // heard again: the last one heard
    await held.lookup("one more", ask("one more"));
    asked = 0;
    expect(await held.lookup("fleet", ask("fleet"))).toBe("fleet");
    expect(asked).toBe(0);
    await held.lookup("t1", ask("t1")); // the one heard longest ago made room
    expect(asked).toBe(1);
  });
});

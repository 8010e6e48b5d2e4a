import { describe, expect, it } from "vitest";
import { Exclusions, Reason } from "@cyclemarket/costbenefit";
import { SERVICE_DECISION_CODES } from "@cyclemarket/market-manager/decision-codes";
import { describeReason, hasWords } from "./reasons";

// Every reason the engine can give reaches the user in words, never as a raw code.
const engineCodes = Reason.options.map((o) => o.shape.code.value as string);

describe("the words for the engine's reasons", () => {
  it("exist for every code the engine can give", () => {
    expect(engineCodes.filter((c) => !hasWords(c))).toEqual([]);
  });

  it("exist for every code the market's decision log gives of its own", () => {
    expect(SERVICE_DECISION_CODES.filter((c) => !hasWords(c))).toEqual([]);
  });

  it("name every exclusion a placement search can count", () => {
    const exclusions = Object.fromEntries(Object.keys(Exclusions.shape).map((k) => [k, 2]));
    const words = describeReason({ code: "no-feasible-machine", taskId: "t", deadlineAt: null, exclusions, linkFull: false });
    for (const k of Object.keys(Exclusions.shape).filter((k) => k !== "inspected")) expect(words).not.toContain(`2 ${k}`);
  });
});

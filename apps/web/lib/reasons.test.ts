import { describe, expect, it } from "vitest";
import { Exclusions, JobFileReason, MARKET_REASON_CODES, Reason, SandboxFailure } from "@cyclemarket/costbenefit";
import { describeJobReason } from "@cyclemarket/client/job-file";
import { describeReason, hasWords } from "./reasons";

// Every reason the market can give reaches the user in words, never as a raw code. The table is
// keyed by the vocabulary's type, so a missing sentence fails the type check first; this test
// fails too, and also checks that a sentence is a sentence rather than the code echoed back.
const engineCodes = Reason.options.map((o) => o.shape.code.value as string);

describe("the words for the market's reasons", () => {
  it("exist for every code the engine can give", () => {
    expect(engineCodes.filter((c) => !hasWords(c))).toEqual([]);
  });

  it("exist for every code of the vocabulary, engine and service alike, and never echo the code", () => {
    expect(MARKET_REASON_CODES.filter((c) => !hasWords(c))).toEqual([]);
    for (const code of MARKET_REASON_CODES) {
      const words = describeReason({ code });
      expect(words, code).not.toMatch(new RegExp(`^${code}\\b`));
      expect(words.length, code).toBeGreaterThan(10);
    }
    for (const cause of SandboxFailure.options) expect(describeReason({ code: "task-failed", cause, taskIndex: 3, attempts: 3 })).not.toContain(`: ${cause}.`);
  });

  it("come from the client package for job files, so the CLI says the same", () => {
    for (const o of JobFileReason.options) expect(describeJobReason({ code: o.shape.code.value }), o.shape.code.value).not.toBeNull();
  });

  it("show a reason's instants, which are milliseconds since the epoch, as dates", () => {
    const at = Date.UTC(2026, 10, 23, 12, 0);
    const words = describeReason({ code: "unprofitable", benefit: 5, marginalCost: 9, completionAt: at });
    expect(words).not.toContain("1970");
    expect(words).toContain("Nov 23");
  });

  it("name every exclusion a placement search can count", () => {
    const exclusions = Object.fromEntries(Object.keys(Exclusions.shape).map((k) => [k, 2]));
    const words = describeReason({ code: "no-feasible-machine", taskId: "t", deadlineAt: null, exclusions, linkFull: false });
    for (const k of Object.keys(Exclusions.shape).filter((k) => k !== "inspected")) expect(words).not.toContain(`2 ${k}`);
  });
});

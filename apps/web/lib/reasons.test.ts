import { describe, expect, it } from "vitest";
import { Exclusions, JobFileReason, MARKET_REASON_CODES, SandboxFailure, type MarketReasonOf } from "@cyclemarket/costbenefit";
import { REASON_SAMPLES } from "@cyclemarket/costbenefit/vocabulary-samples";
import { jobReasonWords } from "@cyclemarket/client/job-file";
import { SERVICE_DECISION_CODES } from "@cyclemarket/market-manager/decision-codes";
import { describeAnyReason, describeReason, failureWords } from "./reasons";

// Every reason the market can give reaches the user in words, never as a raw code. The table is
// keyed by the vocabulary's type and each sentence reads its code's typed fields, so a missing
// sentence or a renamed field fails the type check first; these tests check that a sentence is a
// sentence, with the reason's numbers in it rather than gaps.

describe("the words for the market's reasons", () => {
  it("exist for every code of the vocabulary, engine and service alike, never echo the code, and leave no gaps", () => {
    for (const code of MARKET_REASON_CODES) {
      const words = describeReason(REASON_SAMPLES[code]);
      expect(words, code).not.toMatch(new RegExp(`^${code}\\b`));
      expect(words.length, code).toBeGreaterThan(10);
      expect(words, code).not.toMatch(/\?(?!\))|undefined|NaN|null|\[object/);
    }
    for (const cause of SandboxFailure.options) {
      expect(describeReason({ ...REASON_SAMPLES["task-failed"], cause })).not.toContain(`: ${cause}.`);
    }
  });

  it("say an idle machine took work asking a little more than the holder, never that it asked no more", () => {
    const words = describeReason({ code: "idle-take", why: "no-dearer", takerAsk: 0.88, holderAsk: 0.848 });
    expect(words).toBe("Taken by an idle machine that asks 0.88 cr per reference second of work, at most 10% more than the 0.848 cr of the machine it waited on.");
  });

  it("come from the client package for job files, so the CLI says the same", () => {
    for (const o of JobFileReason.options) {
      const code = o.shape.code.value;
      expect(describeReason(REASON_SAMPLES[code])).toBe(jobReasonWords(REASON_SAMPLES[code]));
    }
  });

  it("show a reason's instants, which are milliseconds since the epoch, as dates", () => {
    const at = Date.UTC(2026, 10, 23, 12, 0);
    const words = describeReason({ code: "unprofitable", benefit: 5, marginalCost: 9, completionAt: at });
    expect(words).not.toContain("1970");
    expect(words).toContain("Nov 23");
  });

  it("exist for every code the market's decision log gives of its own, all of them in the vocabulary", () => {
    for (const c of SERVICE_DECISION_CODES) expect(MARKET_REASON_CODES).toContain(c);
  });

  it("name every exclusion a placement search can count", () => {
    const exclusions = Object.fromEntries(Object.keys(Exclusions.shape).map((k) => [k, 2])) as Exclusions;
    const words = describeReason({ code: "no-feasible-machine", taskId: "t", deadlineAt: null, exclusions, linkFull: false });
    for (const k of Object.keys(Exclusions.shape).filter((k) => k !== "inspected")) expect(words).not.toContain(`2 ${k}`);
  });

  it("say the ceiling a provisional quote states, and the price a refused offer asked", () => {
    const pilots: MarketReasonOf<"pilot-tasks"> = { code: "pilot-tasks", pilots: 3, tasks: 40, provisionalWorkPerTask: 60, wallSeconds: 60, atMost: 1.5 };
    expect(describeReason(pilots)).toContain("at most 1.5");
    expect(describeReason({ ...pilots, atMost: null })).not.toContain("at most");
    const refused = describeReason({ code: "offer-refused", refusal: { code: "offer-too-expensive", contractPrice: 90, value: 12, capacityWork: 1, unitPrice: 1 } });
    expect(refused).toContain("90");
    expect(refused).toContain("12");
  });

  it("name a failed run by what failed: the sandbox's failure or the program's exit code", () => {
    expect(failureWords("exit:3")).toBe("the program exited with code 3");
    expect(failureWords("trap")).toContain("WebAssembly trap");
  });

  it("read a reason that arrived untyped only once it holds its code's fields", () => {
    expect(describeAnyReason({ code: "not-found", what: "job" })).toBe(describeReason({ code: "not-found", what: "job" }));
    // A field the vocabulary does not declare: the code and its numbers, not a sentence with gaps.
    expect(describeAnyReason({ code: "not-found", thing: "job" })).toBe("not-found (thing job).");
    // An admin granting credits to an address nobody has.
    expect(describeReason({ code: "not-found", what: "account" })).toBe("No account has that email address.");
    // The sandbox's own codes, as a worker reports them before the market names them.
    expect(describeAnyReason({ code: "not-wasm", bytes: 12 })).toContain("not a WebAssembly module");
    expect(describeAnyReason({ code: "timeout" })).toContain("past its time limit");
  });
});

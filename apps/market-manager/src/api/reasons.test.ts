import { describe, expect, it } from "vitest";
import { MarketReason, LimitName } from "@cyclemarket/costbenefit";
import { REASON_SAMPLES } from "@cyclemarket/costbenefit/vocabulary-samples";
import { DEFAULT_CONTROLS } from "@cyclemarket/worker-runtime";
import { moduleImporting, paddedModule } from "../../../../test/support/wasm.ts";
import { checkModule } from "../tasks/modules.ts";
import { LiveState, replicaId, type LiveJob, type LiveMachine, type LiveTask } from "../market/live.ts";
import { copyNeedsAnotherMachine, replicaShortfall } from "../market/replicas.ts";
import { TaskQueue } from "../market/task-queue.ts";
import { signupLimiter } from "../http/signup-limit.ts";
import { authRuleFor, authRules } from "../auth/auth-limits.ts";
import { Refusal } from "./errors.ts";
import { publicReason } from "./public-error.ts";
import { jobFailure, runFailures, storedDecision } from "../tasks/stored-reasons.ts";
import type { Config } from "../config.ts";

// The reasons the Market Manager gives of its own parse under the vocabulary's strict schemas,
// and the API's edge holds every reason it answers with to them.

const strict = (r: unknown) => MarketReason.safeParse(r).error?.issues ?? [];

function refusalOf(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    if (e instanceof Refusal) return e.reason;
    throw e;
  }
  throw new Error("nothing was refused");
}

function machine(id: string, ownerId: string): LiveMachine {
  return {
    id, ownerId, name: id, kind: "opportunistic", slots: 1, speed: 1, benchmarkSpeed: 1, network: null, memoryPerSlotMb: 512, pricePerSecondMicro: 0n, reputation: 1,
    contractPriceMicro: null, departsAt: null, contractStartAt: null, contractPaidUntil: null, contractPaidMicro: 0n, unprovenExpiries: 0,
    queue: new TaskQueue(), leases: new Set(), lastHeartbeatAt: 0, controls: DEFAULT_CONTROLS, localAvailable: true,
  };
}

describe("the Market Manager's own reasons", () => {
  it("for copies waiting on machines of other owners parse, with the copies they may not share owners with", () => {
    const state = new LiveState();
    state.machines.set("a1", machine("a1", "ann"));
    state.jobs.set("j", { id: "j", replicas: 3, status: "running" } as LiveJob);
    const copies: LiveTask[] = [0, 1, 2].map((r) => ({ id: replicaId("t", r), jobId: "j", index: 0, replica: r, bytes: 0, machineId: null, state: "pending", attempts: 0 }));
    for (const t of copies) state.tasks.set(t.id, t);
    Object.assign(copies[0]!, { state: "done", machineId: "a1" });
    const waiting = copyNeedsAnotherMachine(state, copies[1]!);
    expect(waiting).toMatchObject({ code: "needs-another-machine", copiesOnMachines: [{ copy: 1, state: "done" }] });
    expect(strict(waiting)).toEqual([]);
    const short = replicaShortfall(state, 3);
    expect(short).toMatchObject({ code: "needs-more-machines", replicas: 3, ownersConnected: 1 });
    expect(strict(short)).toEqual([]);
  });

  it("for refused modules parse, each with the fields the sandbox found", () => {
    const refused = [
      refusalOf(() => checkModule(new TextEncoder().encode("MZ not a module"), 8192)),
      refusalOf(() => checkModule(moduleImporting("env", "abort"), 8192)),
      refusalOf(() => checkModule(paddedModule(4096), 1000)),
    ];
    expect(refused.map((r) => (r as { code: string }).code)).toEqual(["module-not-wasm", "module-forbidden-import", "module-too-large"]);
    for (const r of refused) expect(strict(r), JSON.stringify(r)).toEqual([]);
  });

  it("for sign-ups and account requests name limits of the vocabulary", () => {
    const limiter = signupLimiter({ perAddress: 1, perNetwork: 10, windowMs: 60_000 }, () => 0);
    expect(limiter.check("10.0.0.1")).toBeNull();
    const refused = limiter.check("10.0.0.1");
    expect(refused?.code).toBe("too-many-signups");
    expect(strict(refused)).toEqual([]);
    const cfg = { SIGNINS_PER_MINUTE: 5, AUTH_REQUESTS_PER_MINUTE: 60 } as Config;
    const rules = [...Object.values(authRules(cfg)).flatMap((r) => (r ? [r] : [])), authRuleFor(cfg, "/anything")];
    for (const rule of rules) expect(LimitName.options).toContain(rule.limit);
  });
});

describe("the API's edge", () => {
  it("answers a reason with a field no schema declares as the market's own error, and a good one as it is", () => {
    const good = REASON_SAMPLES["limit-reached"];
    expect(publicReason(good, "r1")).toEqual(good);
    expect(publicReason({ ...good, retryAt: 5 } as never, "r1")).toEqual({ code: "internal-error", requestId: "r1" });
    expect(publicReason(null, "r1")).toBeNull();
  });

  it("reads stored decisions, failures and failed runs through the vocabulary, and refuses one outside it", () => {
    const decision = { outcome: "rejected", reasons: [REASON_SAMPLES.unprofitable], terms: { pricing: "posted" } };
    expect(storedDecision(decision)).toEqual(decision);
    expect(() => storedDecision({ outcome: "rejected", reasons: [{ ...REASON_SAMPLES.unprofitable, cost: 3 }] })).toThrow(/Unrecognized key/);
    expect(jobFailure({ error: REASON_SAMPLES["task-failed"] })).toEqual(REASON_SAMPLES["task-failed"]);
    expect(jobFailure({ kind: "primes", count: 3 })).toBeNull();
    expect(runFailures(["trap", "exit:3"])).toEqual(["trap", "exit:3"]);
    expect(() => runFailures(["exit:three"])).toThrow();
  });
});

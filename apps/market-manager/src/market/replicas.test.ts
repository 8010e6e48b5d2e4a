import { describe, expect, it } from "vitest";
import { DEFAULT_CONTROLS } from "@cyclemarket/worker-runtime";
import { LiveState, replicaId, type LiveJob, type LiveMachine, type LiveTask } from "./live.ts";
import { drawnMachine } from "@cyclemarket/costbenefit";
import { copyNeedsAnotherMachine, mayNotRun, replicaShortfall, siblingOn } from "./replicas.ts";
import { TaskQueue } from "./task-queue.ts";
import { verifierIn } from "./standing.ts";

// The replica rule without a database: copies of one task go to machines of different owners,
// and a consumer whose copy waits is told which machines it may not use and why.

function machine(id: string, ownerId: string): LiveMachine {
  return {
    id, ownerId, name: id, kind: "opportunistic", slots: 1, speed: 1, benchmarkSpeed: 1, network: null, memoryPerSlotMb: 512, pricePerSecondMicro: 0n, reputation: 1,
    contractPriceMicro: null, departsAt: null, contractStartAt: null, contractPaidUntil: null, contractPaidMicro: 0n, unprovenExpiries: 0,
    queue: new TaskQueue(), leases: new Set(), lastHeartbeatAt: 0, controls: DEFAULT_CONTROLS, localAvailable: true,
  };
}

/** A market with the given machines (id -> owner) and one job of `replicas` copies of task "t". */
function market(machines: Record<string, string>, replicas: number) {
  const state = new LiveState();
  for (const [id, owner] of Object.entries(machines)) state.machines.set(id, machine(id, owner));
  state.jobs.set("j", { id: "j", replicas, status: "running" } as LiveJob);
  const copies: LiveTask[] = [];
  for (let r = 0; r < replicas; r++) {
    const t: LiveTask = { id: replicaId("t", r), jobId: "j", index: 0, replica: r, bytes: 0, machineId: null, state: "pending", attempts: 0 };
    state.tasks.set(t.id, t);
    copies.push(t);
  }
  return { state, copies };
}

describe("copies of a task on machines of different owners", () => {
  it("keeps a copy off any machine of an owner whose machine runs or ran another copy", () => {
    const { state, copies } = market({ a1: "ann", a2: "ann", b1: "bob" }, 2);
    Object.assign(copies[0]!, { state: "leased", machineId: "a1" });
    expect(siblingOn(state, copies[1]!, "a1")).toBe(copies[0]);
    expect(siblingOn(state, copies[1]!, "a2")).toBe(copies[0]); // same owner, other machine
    expect(siblingOn(state, copies[1]!, "b1")).toBeUndefined();
  });

  it("remembers who ran a finished copy after its machine has left", () => {
    const { state, copies } = market({ a1: "ann", a2: "ann", b1: "bob" }, 2);
    Object.assign(copies[0]!, { state: "done", machineId: "a1", producerId: "ann" });
    state.machines.delete("a1");
    expect(siblingOn(state, copies[1]!, "a2")).toBe(copies[0]);
  });

  it("says a job needs machines of more owners when it asks for more copies than there are owners", () => {
    const { state } = market({ a1: "ann", a2: "ann", b1: "bob" }, 3);
    expect(replicaShortfall(state, 3)).toEqual({ code: "needs-more-machines", replicas: 3, machinesConnected: 3, ownersConnected: 2 });
    expect(replicaShortfall(state, 2)).toBeNull();
    expect(replicaShortfall(new LiveState(), 3)).toBeNull(); // no machines: the engine's own reason says so
  });

  it("explains a waiting copy only while every connected owner has run another copy", () => {
    const { state, copies } = market({ a1: "ann", b1: "bob" }, 3);
    Object.assign(copies[0]!, { state: "done", machineId: "a1", producerId: "ann" });
    expect(copyNeedsAnotherMachine(state, copies[2]!)).toBeNull(); // bob may still take it
    Object.assign(copies[1]!, { state: "leased", machineId: "b1" });
    Object.assign(copies[2]!, { state: "queued" });
    expect(copyNeedsAnotherMachine(state, copies[2]!)).toMatchObject({
      code: "needs-another-machine",
      copy: 3,
      copiesOnMachines: [{ copy: 1, state: "done" }, { copy: 2, state: "leased" }],
      ownersConnected: 2,
    });
    copies[2]!.agreedHash = "abc"; // the quorum was reached: nothing waits
    expect(copyNeedsAnotherMachine(state, copies[2]!)).toBeNull();
  });
});

describe("the machine a check runs on", () => {
  /** Five machines of five owners with standing; copy 0 of task "t" ran on m1; copy 1 is a check verification added. */
  function checked() {
    const ids = ["m1", "m2", "m3", "m4", "m5"];
    const { state, copies } = market(Object.fromEntries(ids.map((id) => [id, `o${id}`])), 1);
    for (const id of ids) state.owners.set(`o${id}`, { id: `o${id}`, email: `${id}@x.test`, emailConfirmed: true, createdAt: 0, trusted: true, facts: { verified: 0, disagreements: 0, unconfirmedFailures: 0, expiredLeases: 0, forgeries: 0 } });
    Object.assign(copies[0]!, { state: "done", machineId: "m1", producerId: "om1" });
    const check: LiveTask = { id: replicaId("t", 1), jobId: "j", index: 0, replica: 1, bytes: 0, machineId: null, state: "pending", attempts: 0 };
    state.tasks.set(check.id, check);
    return { state, check, others: ["m2", "m3", "m4", "m5"] };
  }
  const draw = { seed: "secret", waitMs: 5000 };
  const allowed = (state: LiveState, check: LiveTask, ids: string[], now: number) => ids.filter((id) => !mayNotRun(state, check, id, now, draw));

  it("is the one the market's seed draws among those that may run it, whoever asks first", () => {
    const { state, check, others } = checked();
    // The draw ranks verifiers, then the drawn one's machines (one each here).
    const byVerifier = new Map(others.map((id) => [verifierIn(state, state.machines.get(id)!.ownerId), id]));
    const drawn = byVerifier.get(drawnMachine("secret", check.id, [...byVerifier.keys()])!);
    expect(allowed(state, check, ["m1", ...others], 1000)).toEqual([drawn]);
    // Without the draw (the rule before it), any machine with standing but the sibling's could take it.
    expect(others.filter((id) => !mayNotRun(state, check, id, 1000))).toEqual(others);
  });

  it("passes over a drawn machine that leaves the check waiting, and starts again once every one was", () => {
    const { state, check, others } = checked();
    const seen: string[] = [];
    let now = 1000;
    for (let i = 0; i < others.length; i++) {
      const [named] = allowed(state, check, others, now);
      expect(seen).not.toContain(named);
      seen.push(named!);
      now += draw.waitMs + 1;
    }
    expect(seen.sort()).toEqual(others);
    expect(allowed(state, check, others, now)).toHaveLength(1);
    // Ten machines of one account are drawn as one: the account is drawn as often as any other.
    const { state: s3, check: c3, others: o3 } = checked();
    const m2 = s3.machines.get("m2")!;
    for (let i = 0; i < 10; i++) s3.machines.set(`m2-${i}`, { ...m2, id: `m2-${i}`, leases: new Set() });
    const draws = Array.from({ length: 400 }, (_, i) => {
      const copy = { ...c3, id: replicaId(`t${i}`, 1), draw: undefined };
      return allowed(s3, copy, ["m1", ...o3, ...Array.from({ length: 10 }, (_, j) => `m2-${j}`)], 1000)[0]!;
    });
    const ofM2 = draws.filter((id) => id.startsWith("m2")).length;
    // One of five accounts: about 80 of 400 (by machines, 11 of 15: about 290).
    expect(ofM2).toBeGreaterThan(50);
    expect(ofM2).toBeLessThan(120);
    // A drawn verifier cannot start its wait again by swapping machines: it is passed over all the same.
    const { state: s4, check: c4, others: o4 } = checked();
    const [first] = allowed(s4, c4, o4, 1000);
    const owner = s4.machines.get(first!)!;
    let t = 1000;
    let current = first!;
    for (let i = 0; i < 4; i++) {
      t += draw.waitMs / 4;
      s4.machines.delete(current);
      current = `${first}-again${i}`;
      s4.machines.set(current, { ...owner, id: current, leases: new Set() });
    }
    t += 1;
    const after = allowed(s4, c4, [...o4, current], t);
    expect(after).toHaveLength(1);
    expect(s4.machines.get(after[0]!)!.ownerId).not.toBe(owner.ownerId);
    // Nor by pausing a moment so that another is drawn, then coming back.
    const { state: s5, check: c5, others: o5 } = checked();
    const [drawn5] = allowed(s5, c5, o5, 1000);
    const m5 = s5.machines.get(drawn5!)!;
    const paused = { ...m5, controls: { ...m5.controls, paused: true } };
    s5.machines.set(drawn5!, paused);
    expect(allowed(s5, c5, o5, 1000 + draw.waitMs - 10)).not.toContain(drawn5);
    s5.machines.set(drawn5!, m5);
    // Its wait ran from its first draw: back after it, it is passed over.
    expect(allowed(s5, c5, o5, 1000 + draw.waitMs + 1000)).not.toContain(drawn5);
    // A drawn machine holding the lease is not passed over while it runs.
    const { state: s2, check: c2, others: o2 } = checked();
    const [holder] = allowed(s2, c2, o2, 1000);
    Object.assign(c2, { state: "leased", machineId: holder });
    expect(mayNotRun(s2, c2, holder!, 1000 + 10 * draw.waitMs, draw)).toBe(false);
  });
});

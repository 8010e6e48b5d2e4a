// Copies of one task run on machines of different owners, or their agreement would prove nothing:
// one owner's machines can all report the same forged output (docs/DESIGN.md "Verification"). The
// rule is the engine's (costbenefit quorum.ts copyConflict, which its planner applies too); this
// file applies it as machines take work, with the live market's owners, and gives the reasons a
// consumer is told when it is what keeps their job waiting.
import { copyConflict, drawnMachine } from "@cyclemarket/costbenefit";
import { quorumNetwork, standingIn, verifierIn } from "./standing.ts";
import type { Reason } from "./engine.ts";
import { offering, type LiveMachine, type LiveState, type LiveTask } from "./live.ts";

/** The other copies of `task` that ran, or are running, somewhere; with `queued`, those waiting in a machine's queue too. */
function siblingsThatRan(state: LiveState, task: LiveTask, queued = false): LiveTask[] {
  return state.copies(task).filter((c) => c !== task && (c.state === "leased" || c.state === "done" || (queued && c.state === "queued")) && c.machineId !== null);
}

/** Who ran a copy: the owner of its machine (remembered once it is done, the machine may have left). */
function ownerOf(state: LiveState, copy: LiveTask): string {
  return copy.producerId ?? state.machines.get(copy.machineId!)?.ownerId ?? `machine:${copy.machineId}`;
}

/**
 * Another copy of `task` that ran, or is running, on a machine of this machine's owner (or its
 * organisation): the machine may not run `task`. With `queued`, a copy queued there counts too:
 * a queued task is not moved next to a copy of itself.
 */
export function siblingOn(state: LiveState, task: LiveTask, machineId: string, queued = false): LiveTask | undefined {
  // A task without copies has no sibling: said at once, as a lease asks it of every task in the queues it looks at.
  if ((state.jobs.get(task.jobId)?.replicas ?? 1) < 2 && state.copies(task).length < 2) return undefined;
  const machine = state.machines.get(machineId);
  const owner = machine?.ownerId ?? `machine:${machineId}`;
  const siblings = siblingsThatRan(state, task, queued);
  const holders = siblings.map((c) => {
    const o = ownerOf(state, c);
    return { owner: o, verifier: verifierIn(state, o), machine: c.machineId!, network: quorumNetwork(state, o, c.producerNetwork ?? state.machines.get(c.machineId!)?.network) };
  });
  const hit = copyConflict({ id: machineId, owner, verifier: verifierIn(state, owner), network: quorumNetwork(state, owner, machine?.network), standing: true }, { added: false, ranBy: holders });
  return hit && hit !== "standing" ? siblings[holders.findIndex((h) => h === hit)] : undefined;
}

/** The market's secret seed, and how long a drawn machine may leave its copy waiting before the draw passes it over. */
export interface CopyDraw {
  seed: string;
  waitMs: number;
}

/** How long a draw is kept before it is made again (one that named a machine, longer while no machine joins or leaves). */
const DRAW_KEPT_MS = 1000;

/**
 * The machine a copy verification added may run on: drawn from the market's seed (costbenefit
 * drawnMachine) among the connected machines that offer capacity, belong to an account with
 * standing and hold no copy of the task. The draw ranks verifiers (an account, or one confirmed
 * domain), then one of the drawn verifier's machines: machines cost nothing to register, and an
 * account with ten would otherwise be drawn ten times as often as one with one. It is made again
 * when the drawn machine leaves or stops offering capacity, or machines join or leave (at most
 * once a second). A verifier whose drawn machine lets the copy wait past `waitMs` unleased is
 * passed over, all its machines; once every verifier was, the draw starts again.
 */
function drawnFor(state: LiveState, task: LiveTask, draw: CopyDraw, now: number): string | null {
  const kept = task.draw;
  const due = kept?.verifier && task.state !== "leased" && now - kept.drawnAt[kept.verifier]! > draw.waitMs;
  if (kept && !due) {
    const fresh = now - kept.at < DRAW_KEPT_MS;
    const still = kept.machineId === null ? undefined : state.machines.get(kept.machineId);
    if (kept.machineId === null ? fresh : still !== undefined && offering(still) && (fresh || kept.machines === state.machines.size)) return kept.machineId;
  }
  const passed = new Set(kept?.passed ?? []);
  const drawnAt = { ...kept?.drawnAt };
  if (due) passed.add(kept.verifier!);
  // Two passes over the machines, no grouping: the first draws a verifier among those with a
  // machine that may run the copy (asked only of machines whose verifier would be drawn), the
  // second one of its machines.
  const mayRun = (m: LiveMachine) => offering(m) && standingIn(state, m.ownerId, now).has && siblingOn(state, task, m.id) === undefined;
  let at: LiveMachine | undefined;
  function* verifiers() {
    for (const m of state.machines.values()) {
      at = m;
      yield verifierIn(state, m.ownerId);
    }
  }
  const drawVerifier = (skip: Set<string>) => drawnMachine(draw.seed, task.id, verifiers(), (v) => !skip.has(v) && mayRun(at!));
  let verifier = drawVerifier(passed);
  if (verifier === null && passed.size) {
    passed.clear();
    for (const v of Object.keys(drawnAt)) delete drawnAt[v];
    verifier = drawVerifier(passed);
  }
  const machinesOf = function* (v: string) {
    for (const m of state.machines.values()) if (verifierIn(state, m.ownerId) === v && mayRun(m)) yield m.id;
  };
  const machineId = verifier === null ? null : drawnMachine(draw.seed, `${task.id}:${verifier}`, machinesOf(verifier));
  // The wait is the verifier's, from the first time it was drawn for this copy: a machine of it
  // leaving or joining, or all of them pausing a moment so that another verifier is drawn, does
  // not start it again.
  if (verifier !== null) drawnAt[verifier] ??= now;
  task.draw = { machineId, verifier, at: now, machines: state.machines.size, passed: [...passed], drawnAt };
  return machineId;
}

/**
 * Whether `machineId` may not run `task`: its owner ran or runs another copy of it; the copy was
 * added by verification and the machine's owner has no standing, or (with `draw`) the market's
 * draw named another machine; its owner reported a failure (the program's or its worker's)
 * that no other owner has reproduced yet, while a machine of another owner is there
 * to run it (its next run must be that owner's; with no other owner connected, the same owner
 * runs it again, and its failures, never confirmed, are never paid); or only accounts without
 * standing reported its failures and the machine's owner has none either.
 */
export function mayNotRun(state: LiveState, task: LiveTask, machineId: string, now: number, draw?: CopyDraw): boolean {
  if (task.failures?.length) {
    const owner = state.machines.get(machineId)?.ownerId;
    // Every failure, a worker's own trouble too: one machine reporting crashes could otherwise take
    // the task back, as the cheapest, until its attempts are spent and the job fails.
    const failed = new Set(task.failures.map((f) => f.owner));
    if (owner !== undefined && failed.has(owner) && [...state.machines.values()].some((m) => !failed.has(m.ownerId))) return true;
    // A failure only an account with standing can confirm (costbenefit confirmedFailure): after one
    // reported by an account without it, the next run is one that has it, or fresh accounts of one
    // person would fail the task over and over until it is given up.
    if (failed.size && [...failed].every((o) => !standingIn(state, o, now).has) && (owner === undefined || !standingIn(state, owner, now).has)) return true;
  }
  const k = state.jobs.get(task.jobId)?.replicas ?? 1;
  if (task.replica >= k) {
    const owner = state.machines.get(machineId)?.ownerId;
    if (owner === undefined || !standingIn(state, owner, now).has) return true;
    if (draw && drawnFor(state, task, draw, now) !== machineId) return true;
  }
  return siblingOn(state, task, machineId) !== undefined;
}

/** Owners with at least one connected machine: copies of one task need that many. */
function connectedOwners(state: LiveState): number {
  return new Set([...state.machines.values()].map((m) => m.ownerId)).size;
}

/** A job asking for more copies of each task than there are owners with machines cannot be placed yet. */
export function replicaShortfall(state: LiveState, replicas: number): Reason | null {
  const ownersConnected = connectedOwners(state);
  return replicas > ownersConnected && state.machines.size > 0
    ? { code: "needs-more-machines", replicas, machinesConnected: state.machines.size, ownersConnected }
    : null;
}

/**
 * A copy waiting while every connected owner ran or runs another copy of its task: it starts
 * when a machine of another owner connects. Null when some connected machine may take it.
 */
export function copyNeedsAnotherMachine(state: LiveState, task: LiveTask): Reason | null {
  // A copy of a task whose quorum is reached holds nothing back.
  if ((task.state !== "queued" && task.state !== "pending") || task.agreedHash) return null;
  if (state.machines.size === 0) return null;
  // At most k - 1 siblings: the check costs nothing next to the machines' count.
  const holders = siblingsThatRan(state, task);
  const owners = new Set(holders.map((h) => ownerOf(state, h)));
  if ([...state.machines.values()].some((m) => !owners.has(m.ownerId))) return null;
  return {
    code: "needs-another-machine",
    taskIndex: task.index,
    copy: task.replica + 1,
    copiesOnMachines: holders.map((h) => ({ copy: h.replica + 1, state: h.state })).sort((x, y) => x.copy - y.copy),
    machinesConnected: state.machines.size,
    ownersConnected: connectedOwners(state),
  };
}

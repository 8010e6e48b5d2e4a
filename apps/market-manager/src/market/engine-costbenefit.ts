import {
  MarketState,
  askedAgainDue,
  askedNow,
  commitDecision,
  commitReplacement,
  createLivePolicy,
  createRng,
  decidePilots,
  decideRemainder,
  type Decision as EngineDecision,
  type Job,
  type MarketSettingsInput,
  type Policy,
  type Reason,
  type StateSeen,
} from "@cyclemarket/costbenefit";
import type { Decision, Engine, JobSpec, TaskDemand } from "./engine.ts";
import { offeredCapacity, type LiveMachine } from "./live.ts";

// The engine works in seconds on the market's clock; the service in milliseconds.
const sec = (ms: number) => ms / 1000;
const ms = (seconds: number) => seconds * 1000;

/** The instants a reason can carry (engine seconds); durations keep their unit in their name. */
const INSTANTS = ["completionAt", "deadlineAt", "earliestCompletionAt", "departureAt", "now"] as const;

/** A reason with its instants in milliseconds since the epoch, as everything on the wire is. */
export function wireReason(reason: Reason): Reason {
  let out: Record<string, unknown> | undefined;
  for (const key of INSTANTS) {
    const v = (reason as Record<string, unknown>)[key];
    if (typeof v === "number" && Number.isFinite(v)) (out ??= { ...reason })[key] = ms(v);
  }
  return (out ?? reason) as Reason;
}
const wire = (reasons: readonly Reason[]) => reasons.map(wireReason);
const MICRO = 1_000_000;

// The engine plans on the capacity the producer offers now (its controls), not on the hardware;
// no link is measured yet, so the engine plans each at its unmeasured bandwidth.
function profileOf(m: LiveMachine) {
  const common = { id: m.id, owner: m.ownerId, slots: m.slots, ...offeredCapacity(m), reputation: m.reputation };
  return m.kind === "dedicated"
    ? { ...common, kind: "dedicated" as const, contractPrice: Number(m.contractPriceMicro ?? 0n) / MICRO, departureAt: sec(m.departsAt ?? 0) }
    : { ...common, kind: "opportunistic" as const, pricePerSecond: Number(m.pricePerSecondMicro) / MICRO };
}

/** The live market's engine: one MarketState kept in step with the database, one policy. */
export function createEngine(policyName = "miserly", settings: MarketSettingsInput = {}, seed = 1): Engine & { state: MarketState; policy: Policy } {
  const state = new MarketState(settings);
  let policy = createLivePolicy(policyName);
  const rng = createRng(seed);
  // What each decision saw: the service writes a decision down before it commits it here, and a
  // machine may join or a task finish meanwhile (commitDecision's `seen`).
  const decided = new WeakMap<Decision, { job: Job; decision: EngineDecision; seen: StateSeen }>();
  let last = 0;
  const at = (ms: number) => (last = Math.max(last, sec(ms)));

  const toJob = (spec: JobSpec): Job => ({
    id: spec.id,
    arrivedAt: sec(spec.arrivedAt),
    tasks: spec.tasks,
    benefit: spec.benefit,
    replicas: spec.replicas,
  });
  const answer = (job: Job, d: EngineDecision): Decision =>
    d.outcome === "admitted"
      ? {
          outcome: "admitted",
          completionAt: ms(d.completionAt),
          price: d.price,
          priceParts: d.priceParts,
          priceAtWork: d.priceAtWork?.map((w) => ({ ...w, completionAt: ms(w.completionAt) })),
          placements: d.placements.map((p) => ({ taskId: p.taskId, machineId: p.machineId, expectedFinishAt: ms(p.expectedFinishAt), marginalCost: p.marginalCost })),
          reasons: wire(d.reasons),
        }
      : { outcome: d.outcome, reasons: wire(d.reasons) };
  const forget = (taskId: string) => {
    if (state.tasks.has(taskId)) state.taskFinished(taskId, last, 0);
  };

  return {
    state,
    get policy() {
      return policy;
    },
    configure(config) {
      state.updateSettings({ horizonSeconds: config.horizonSeconds, priceConstant: config.priceConstant, pricing: config.pricing, feeFraction: config.feeFraction, maxDelaySeconds: config.maxDelaySeconds });
      if (config.policy !== policy.name) policy = createLivePolicy(config.policy);
    },
    addMachine(m: LiveMachine, now: number) {
      state.upsertMachine(profileOf(m), at(now));
    },
    considerOffer(m: LiveMachine, now: number, budget: number) {
      const p = profileOf(m);
      if (p.kind !== "dedicated") return { accept: true, reasons: [] };
      const d = policy.considerDedicatedOffer(state, p, at(now), budget);
      return { accept: d.accept, reasons: wire(d.reasons) };
    },
    removeMachine(machineId) {
      state.removeMachine(machineId, last);
    },
    decide(spec, now) {
      const seen = state.seen();
      const job = toJob(spec);
      const d = policy.admit(state, job, at(now), rng);
      const out = answer(job, d);
      decided.set(out, { job, decision: d, seen });
      return out;
    },
    decidePilots(spec, wallMs, terms, now, quote = false) {
      const seen = state.seen();
      let asked = toJob(spec);
      const ask = (j: Job) => (quote ? policy.quote(state, (asked = j), at(now), rng) : policy.admit(state, (asked = j), at(now), rng));
      const d = decidePilots(ask, terms, asked, sec(wallMs));
      const out = answer(asked, d);
      if (!quote) decided.set(out, { job: asked, decision: d, seen });
      return out;
    },
    decideRemainder(spec, pilots, wallMs, now) {
      const seen = state.seen();
      let asked = toJob(spec);
      const r = decideRemainder((j) => policy.admit(state, (asked = j), at(now), rng), pilots.terms, {
        job: asked,
        pilots: pilots.count,
        runs: pilots.runs,
        wallSeconds: sec(wallMs),
        pilotPrice: pilots.priceCredits,
      });
      const out = answer(asked, r.decision);
      decided.set(out, { job: asked, decision: r.decision, seen });
      return { decision: out, workPerTask: r.workPerTask };
    },
    remainderDue(asked, now) {
      return askedAgainDue(state, asked, sec(now));
    },
    remainderAsked(previous, now) {
      return askedNow(state, previous, sec(now));
    },
    quote(spec, now) {
      const job = toJob(spec);
      return answer(job, policy.quote(state, job, at(now), rng));
    },
    commit(_spec, decision) {
      const original = decided.get(decision);
      if (!original) throw new Error("commit of a decision this engine did not make");
      decided.delete(decision);
      commitDecision(state, original.job, original.decision, last, original.seen);
    },
    place(tasks: TaskDemand[], now) {
      at(now);
      const pending = tasks;
      for (const t of pending) forget(t.id);
      const r = policy.place(state, pending, last, rng);
      commitReplacement(state, pending, r, last);
      const out = new Map<string, string | null>(tasks.map((t) => [t.id, null]));
      for (const p of r.placements) out.set(p.taskId, p.machineId);
      return out;
    },
    assume(tasks, machineId) {
      for (const t of tasks) if (!state.tasks.has(t.id)) state.assignTask(t, machineId, last);
    },
    taskStarted(taskId, _machineId, now) {
      if (state.tasks.has(taskId)) state.taskStarted(taskId, at(now));
    },
    taskFinished(taskId, _machineId, seconds, now) {
      if (state.tasks.has(taskId)) state.taskFinished(taskId, at(now), seconds);
    },
    taskMoved(taskId, _from, to) {
      if (state.tasks.has(taskId) && state.hasMachine(to)) state.moveTask(taskId, to, last);
    },
    assumeDelayed(spec, now) {
      state.delayJob(toJob(spec), at(now), []);
      // Not asked by this engine yet: due at the first tick, whatever changed since.
      state.delayed.get(spec.id)!.epoch = -1;
    },
    jobEnded(jobId) {
      state.forgetDelayedJob(jobId);
    },
    tick(now) {
      const t = policy.tick(state, at(now), rng);
      return {
        reevaluate: t.reevaluate,
        reject: t.reject.map((r) => ({ jobId: r.jobId, reasons: wire(r.reasons) })),
        moves: t.moves.map((m) => ({ ...m, reasons: wire(m.reasons) })),
      };
    },
    taskDropped(taskId) {
      forget(taskId);
    },
  };
}

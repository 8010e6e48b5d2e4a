// The Market Manager applies the engine's answers and computes none of its rules itself
// (CONVENTIONS.md "The shape"): the attempt and failure limits, the escrow of a pilot job's rest,
// the lease room, the offers it believes, which runs measure work and speed, what a contradicted
// estimate is charged, the live policy and the bandwidth it plans on. This test reads the service's
// source: each rule written again in the service is a pattern found below, and each place that
// applies a rule must call the engine's function for it.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = import.meta.dirname;

/** The service's source files, tests and generated code left out. */
function sources(dir = SRC): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "generated" && e.name !== "node_modules") out.push(...sources(path));
    } else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && !e.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Code without its comments: a comment may name a rule, only code may compute one. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:\\])\/\/.*$/gm, "$1");

/** A rule computed in the service: the pattern that finds it, and an example of it the pattern must find. */
const RULES: { rule: string; pattern: RegExp; example: string }[] = [
  { rule: "the lease room factor (costbenefit leaseRoom)", pattern: /(offeredSlots\([^)]*\)|\bslots)\s*\*\s*[\d.]+|\b\d+\s*\*\s*(offeredSlots\(|[\w.]*\bslots\b)/, example: "const room = offeredSlots(m) * 2 - m.leases.size;" },
  { rule: "the leases per slot", pattern: /\bLEASES_PER_SLOT\b/, example: "Math.min(max, LEASES_PER_SLOT * m.slots)" },
  { rule: "the lease room left (costbenefit leaseRoomLeft)", pattern: /\b(leaseRoom|leaseRoomOf)\([^()]*(\([^()]*\))?[^()]*\)\s*-/, example: "const room = leaseRoomOf(m) - m.leases.size;" },
  { rule: "the spare queued tasks (costbenefit spareTasks, spareFrom)", pattern: /offeredSlots\([^)]*\)\s*-\s*[\w.]*leases/, example: "Math.max(0, m.queue.length - Math.max(0, offeredSlots(m) - m.leases.size))" },
  { rule: "the attempt and failure limits (costbenefit taskOutcome)", pattern: /[<>]=?\s*[\w.]*\b(maxAttempts|confirmedFailureLimit)\b|\b(maxAttempts|confirmedFailureLimit)\b\s*[<>]/, example: "failures.length >= terms.maxAttempts" },
  { rule: "the pilots' escrow backing the rest (costbenefit remainderEscrow)", pattern: /\b(escrowMicro|maxSpendMicro)\s*-\s*[\w.]*priceMicro\b/, example: "const spare = job.escrowMicro - pilots.priceMicro;" },
  { rule: "which runs measure work: the consumer's own network (costbenefit workSampleOf)", pattern: /[!=]==?\s*[\w.]*\bsubmitNetwork\b|\bsubmitNetwork\s*[!=]==?\s*[\w.]*network\b/, example: "machine.network !== job.submitNetwork" },
  { rule: "which runs measure work and speed: the terms behind them (costbenefit workSampleOf, speedAfterRun)", pattern: /\.(workSamplesKept|speedSampleMinSeconds|speedSampleWeight)\b/, example: "job.workSamples.length < t.workSamplesKept" },
  { rule: "a run's work sample and speed, taken directly (costbenefit workSampleOf, speedAfterRun)", pattern: /\b(workSample|measuredSpeed)\(/, example: "measuredSpeed(t, m, r)" },
  { rule: "whether an estimate is contradicted (costbenefit contradictedWork)", pattern: /\bestimateContradicted\(/, example: "estimateContradicted(t, declared, measured)" },
  { rule: "what a contradicted estimate is charged (costbenefit measuredWorkCharge)", pattern: /\bpriceAtRatio\(|\bprice\s*\*\s*Math\.max\(1,/, example: "price * Math.max(1, ratio)" },
  { rule: "the offers the market believes (costbenefit offerFault, OFFER_LIMITS)", pattern: /\b(MIN_SPEED|MAX_SPEED|MIN_BANDWIDTH|MAX_BANDWIDTH|MAX_PRICE_PER_SECOND)\b|offer\.(speed|slots|pricePerSecond|memoryPerSlotMb|bandwidthBytesPerSecond)\s*[<>]/, example: "if (!(offer.speed >= MIN_SPEED && offer.speed <= MAX_SPEED))" },
  { rule: "the live policy's minimum gain (costbenefit createLivePolicy)", pattern: /\bminGain\b/, example: "createPolicy(name, { migration: { ...m, minGain: 0 } })" },
  { rule: "the bandwidth planned for an unmeasured link (costbenefit UNMEASURED_BANDWIDTH)", pattern: /bandwidthBytesPerSecond\s*:\s*(\d|[A-Z_]+\b)/, example: "const common = { id: m.id, bandwidthBytesPerSecond: DEFAULT_BANDWIDTH };" },
];

/** Where the service applies each rule, and the engine's function it must call there. */
const APPLIED: { file: string; calls: string[] }[] = [
  { file: "tasks/results.ts", calls: ["taskOutcome", "confirmedFailure", "verifyCopies", "spotChecked"] },
  { file: "tasks/run-pay.ts", calls: ["workSampleOf", "speedAfterRun", "contradictedWork", "measuredWorkCharge"] },
  // The charge at the measured work comes from run-pay.ts (contradictedCharge), for settlement and lease budgets alike.
  { file: "ledger/settlement.ts", calls: ["contradictedCharge", "settleJob", "settleUnfinishedJob"] },
  { file: "resources/lease-terms.ts", calls: ["contradictedCharge", "leaseBudget"] },
  { file: "market/remainder.ts", calls: ["remainderEscrow", "remainderMaxSpend"] },
  { file: "market/live.ts", calls: ["leaseRoomLeft"] },
  { file: "market/work-routes.ts", calls: ["spareTasks", "idleTake"] },
  { file: "resources/machines.ts", calls: ["offerFault", "contractOverStanding"] },
  { file: "market/standing.ts", calls: ["standingOf", "verifierOf", "contractCeiling"] },
  { file: "market/engine-costbenefit.ts", calls: ["createLivePolicy"] },
];

describe("the service applies the engine's rules and computes none itself", () => {
  const files = sources().map((path) => ({ path: relative(SRC, path), text: code(readFileSync(path, "utf8")) }));

  it("reads the service's source", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files.map((f) => f.path)).toContain("tasks/results.ts");
  });

  it.each(RULES)("finds $rule where it is written again", ({ pattern, example }) => {
    expect(example).toMatch(pattern);
  });

  it.each(RULES)("no service file computes $rule", ({ pattern }) => {
    const found = files.flatMap((f) => f.text.split("\n").flatMap((line, i) => (pattern.test(line) ? [`${f.path}:${i + 1}: ${line.trim()}`] : [])));
    expect(found).toEqual([]);
  });

  it.each(APPLIED)("$file calls the engine's rules", ({ file, calls }) => {
    const f = files.find((x) => x.path === file);
    expect(f, `${file} is where the service applies these rules`).toBeDefined();
    expect(f!.text).toMatch(/from "@cyclemarket\/costbenefit"/);
    for (const name of calls) expect(f!.text, `${file} calls ${name}`).toMatch(new RegExp(`\\b${name}\\(`));
  });
});

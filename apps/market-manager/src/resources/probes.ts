import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { probeDelay } from "@cyclemarket/costbenefit";
import type { Lease } from "@cyclemarket/worker-runtime";
import type { Market } from "../market/market.ts";
import type { LiveMachine, LiveProbe } from "../market/live.ts";
import { rowId } from "../db/row-id.ts";

// Probe tasks: how an idle dedicated machine proves it is there (docs/DESIGN.md "Dedicated pay for
// proven capacity"). At random moments while it holds no lease (costbenefit probeDelay) the market
// sends it a small module (apps/worker-runtime/examples/src/probe.ts) with a seed it drew itself,
// as a lease like any other, so an honest worker runs it without knowing it is a probe; the
// answer must come back within the lease timeout and be the one the market computed.

const require = createRequire(import.meta.url);

/** Passes of the probe's hash over its seed: a few milliseconds of work, enough that an answer means the module ran. */
export const PROBE_ROUNDS = 1024;
const PROBE_LIMITS = { wallMs: 10_000, memoryPages: 64, outputBytes: 1024 };
/** The probe's job and task ids on the wire: no job of the market has them. */
export const PROBE_JOB_ID = "probe";

let bytes: Uint8Array | null = null;
let hash: string | null = null;

/** The probe module's bytes (built with the examples at install). */
export function probeModule(): Uint8Array {
  return (bytes ??= readFileSync(require.resolve("@cyclemarket/worker-runtime/examples/probe.wasm")));
}

export function probeModuleHash(): string {
  return (hash ??= createHash("sha256").update(probeModule()).digest("hex"));
}

/**
 * What the probe module prints for `seed` and `rounds`: 64-bit FNV-1a of the seed's characters,
 * `rounds` times over, in hex. In two 32-bit halves on the market's thread (BigInt steps cost
 * tens of times more): the prime is 2^40 + 0x1b3, so h * prime = (h << 40) + h * 0x1b3.
 */
export function probeAnswer(seed: string, rounds: number): string {
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < seed.length; i++) {
      lo = (lo ^ seed.charCodeAt(i)) >>> 0;
      const low = lo * 0x1b3;
      const carry = Math.floor(low / 0x1_0000_0000);
      hi = (hi * 0x1b3 + carry + (lo & 0xffffff) * 256) >>> 0;
      lo = low >>> 0;
    }
  }
  return `${hi.toString(16).padStart(8, "0")}${lo.toString(16).padStart(8, "0")}\n`;
}

/** A uniform draw in [0, 1) from the operating system's randomness: a producer cannot predict its probes. */
const draw = () => randomBytes(4).readUInt32BE() / 2 ** 32;

/** When the idle machine is probed next, from `from`. */
export function scheduleProbe(market: Market, m: LiveMachine, from: number) {
  m.nextProbeAt = from + probeDelay(draw(), market.settings.leaseTimeoutMs);
}

/** A probe for the machine, due within the lease timeout; sent at once on its work stream if it takes leases there, else in its next lease call's answer. */
export function sendProbe(market: Market, m: LiveMachine, now: number): LiveProbe {
  const seed = randomBytes(16).toString("hex");
  const probe: LiveProbe = { id: rowId(), machineId: m.id, seed, rounds: PROBE_ROUNDS, answer: probeAnswer(seed, PROBE_ROUNDS), issuedAt: now, dueAt: now + market.settings.leaseTimeoutMs, sent: false };
  m.probe = probe;
  market.state.probes.set(probe.id, probe);
  if (market.workRoutes.streamLeaseMax(m.id) > 0) {
    probe.sent = true;
    market.workRoutes.push(m.id, [probeLease(probe)]);
  }
  return probe;
}

/** The probe as the worker is sent it: a lease of the probe module with the seed as its argument. */
export function probeLease(p: LiveProbe): Lease {
  return {
    leaseId: p.id,
    taskId: p.id,
    jobId: PROBE_JOB_ID,
    moduleHash: probeModuleHash(),
    seed: p.id,
    args: [p.seed, String(p.rounds)],
    stdin: "",
    limits: PROBE_LIMITS,
    expiresAt: p.dueAt,
    pieceRateMicro: "0",
  };
}

/** The machine's probe not handed to it yet (its stream did not take it): handed now, in a lease call's answer. */
export function probeToHand(m: LiveMachine): Lease | null {
  const p = m.probe;
  if (!p || p.sent) return null;
  p.sent = true;
  return probeLease(p);
}

/** Whether `stdout` (base64) is the probe's answer, reported in time. */
export function probeAnswered(p: LiveProbe, report: { exitCode: number; stdout: Buffer }, at: number): boolean {
  return at <= p.dueAt && report.exitCode === 0 && report.stdout.toString("utf8") === p.answer;
}

/** The probe is over (answered, or missed): the machine's next one is drawn from `at`. */
export function probeDone(market: Market, m: LiveMachine, p: LiveProbe, at: number) {
  market.state.probes.delete(p.id);
  if (m.probe === p) m.probe = undefined;
  scheduleProbe(market, m, at);
}

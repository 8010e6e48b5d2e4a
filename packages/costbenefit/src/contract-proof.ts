// docs/DESIGN.md "Dedicated pay for proven capacity". A dedicated contract is paid for the time
// its machine proves it is there, never for heartbeats: a heartbeat costs nothing, so a machine
// that only heartbeats would be paid the whole contract while the tasks the market queued on it
// (an idle dedicated machine has no marginal cost, so they go there first) waited and failed.
//
// A machine proves it is available by working: it leases what is queued for it, reports what it
// leased, and answers the market's probe tasks (small tasks whose answer the market knows, sent
// at random moments while it is idle). It misses when queued work waits unleased past the
// documented delay, when a probe goes unanswered (or wrongly answered) past it, and when a lease it
// took runs out without a report. Time from a miss to the next proof is never paid.

/** What the market knows of a dedicated machine's proof of presence (seconds on the market's clock). */
export interface ContractProof {
  /** Up to when the machine has proved it was there: the contract may be paid up to here. */
  provenUntil: number;
  /** The moment of the earliest miss not yet followed by a proof; null when the machine is in good standing. */
  missedAt: number | null;
}

/** A contract's proof when it starts (or when the market resumes after it could not hear anyone): proven up to `at`. */
export const freshProof = (at: number): ContractProof => ({ provenUntil: at, missedAt: null });

/**
 * The machine proved at `at` that it is there. Without a miss since its last proof, the time up
 * to `at` is proven. After a miss, the time from the miss to `at` is forfeited: `paidUntil` moves
 * to `at` without pay, and the proof starts again from there.
 */
export function contractProved(proof: ContractProof, paidUntil: number, at: number): { proof: ContractProof; paidUntil: number } {
  if (proof.missedAt === null) return { proof: { provenUntil: Math.max(proof.provenUntil, at), missedAt: null }, paidUntil };
  const from = Math.max(paidUntil, at);
  return { proof: { provenUntil: from, missedAt: null }, paidUntil: from };
}

/**
 * The machine missed an obligation that fell due at `at` (the moment the probe was sent, the work
 * was queued for it, or the lease was handed out). Whatever was proven after that moment is taken
 * back (never below what was paid already), and nothing more is proven until the next proof. The
 * service pays what this leaves proven when it records the miss (contractAccrual): the next proof
 * forfeits everything from `paidUntil` on.
 */
export function contractMissed(proof: ContractProof, paidUntil: number, at: number): ContractProof {
  return {
    provenUntil: Math.max(paidUntil, Math.min(proof.provenUntil, at)),
    missedAt: proof.missedAt === null ? at : Math.min(proof.missedAt, at),
  };
}

/**
 * When probes go out, as multiples of the lease timeout: a probe is answered within one lease
 * timeout (the same delay a machine has to lease what is queued for it), and idle machines are
 * probed at random moments a mean of PROBE_MEAN_TIMEOUTS lease timeouts apart, never closer than
 * PROBE_MIN_TIMEOUTS nor further than PROBE_MAX_TIMEOUTS (a bounded wait keeps an honest machine's
 * unpaid tail short, a floor keeps the probes' cost bounded).
 */
export const PROBE_MEAN_TIMEOUTS = 2;
export const PROBE_MIN_TIMEOUTS = 0.5;
export const PROBE_MAX_TIMEOUTS = 6;

/**
 * The wait before an idle machine's next probe, from a uniform draw `u` in [0, 1): exponential
 * (memoryless, so a machine cannot learn when the next one comes from when the last one came),
 * clamped to the bounds above. Same unit as `leaseTimeout`.
 */
export function probeDelay(u: number, leaseTimeout: number): number {
  const mean = PROBE_MEAN_TIMEOUTS * leaseTimeout;
  const draw = -Math.log(1 - Math.min(Math.max(u, 0), 1 - 1e-12)) * mean;
  return Math.min(PROBE_MAX_TIMEOUTS * leaseTimeout, Math.max(PROBE_MIN_TIMEOUTS * leaseTimeout, draw));
}

// The reason codes the service itself gives in the decision log (the engine's are in
// @cyclemarket/costbenefit's Reason). The web's words test checks each has a sentence.

/** Why a machine left the market. */
export const DEPARTURE_CODES = {
  left: "machine-left",
  "missed-heartbeats": "missed-heartbeats",
  "contract-ended": "contract-ended",
  "missed-leases": "missed-leases",
  // A dead manager's row of a machine offered to several (market/adopt.ts): the others hold rows of their own.
  "manager-gone": "manager-gone",
} as const;

/** A task waiting for a machine was given one: it lost its own (departure, expired lease, failed run), or it is a copy added to check a result. */
export const PLACED_AGAIN = "placed-again";

/** A machine an admin moved went from one Market Manager to another (market/machine-moves.ts), at once or once drained. */
export const MACHINE_HANDED = "machine-handed";

/** A busy machine an admin moved drains first (market/machine-drains.ts): started, cancelled, or dropped (its target gone). */
export const DRAIN_CODES = {
  started: "machine-draining",
  cancelled: "machine-drain-cancelled",
  dropped: "machine-drain-dropped",
} as const;

export const SERVICE_DECISION_CODES: readonly string[] = [...Object.values(DEPARTURE_CODES), PLACED_AGAIN, MACHINE_HANDED, ...Object.values(DRAIN_CODES)];

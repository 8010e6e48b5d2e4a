import { statement } from "./statement.ts";

export interface RegisterMachineParams {
  id: string;
  ownerId: string;
  apiTokenId: string | null;
  name: string;
  kind: "opportunistic" | "dedicated";
  slots: number;
  speed: number;
  memoryPerSlotMb: number;
  bandwidthBps: number;
  /** Micro-credits as decimal text. */
  pricePerSecond: string;
  contractPrice: string | null;
  /** Instants in ms since the epoch. */
  availableUntil: number | null;
  contractPaidUntil: number | null;
  userAgent: string;
  now: number;
  /** MachineControls as JSON. */
  controls: string;
  localAvailable: boolean;
  network: string | null;
  /** The Market Manager that holds the machine (market/managers.ts). */
  managerId: string;
  /** The key every manager's row of one machine offered to several carries; null for one manager. */
  offerKey: string | null;
  /** Its worker follows a move to another manager. */
  follows: boolean;
}

/**
 * A machine's row as it registers (resources/machines.ts), one statement sent straight on the
 * pool: through the client's create it was a third of a registration's cost on the market's
 * thread (bench/call-costs.ts), and a thousand machines joining make a thousand of them.
 */
export const registerMachine = statement<RegisterMachineParams, never>(
  "register-machine",
  (p) => `
INSERT INTO "Machine" (id, "ownerId", "apiTokenId", name, kind, slots, speed, "benchmarkSpeed", "memoryPerSlotMb", "bandwidthBps",
  "pricePerSecondMicro", "contractPriceMicro", "availableUntil", "contractPaidUntil", "userAgent",
  "lastHeartbeatAt", "registeredAt", controls, "localAvailable", network, "managerId", "offerKey", follows)
VALUES (${p.id}, ${p.ownerId}, ${p.apiTokenId}, ${p.name}, ${p.kind}::"MachineKind", ${p.slots}::int, ${p.speed}::float8, ${p.speed}::float8, ${p.memoryPerSlotMb}::int, ${p.bandwidthBps}::float8,
  ${p.pricePerSecond}::bigint, ${p.contractPrice}::bigint, timestamp 'epoch' + ${p.availableUntil}::float8 * interval '1 millisecond',
  timestamp 'epoch' + ${p.contractPaidUntil}::float8 * interval '1 millisecond', ${p.userAgent},
  timestamp 'epoch' + ${p.now}::float8 * interval '1 millisecond', timestamp 'epoch' + ${p.now}::float8 * interval '1 millisecond', ${p.controls}::jsonb, ${p.localAvailable}::boolean, ${p.network}, ${p.managerId}, ${p.offerKey}, ${p.follows}::boolean)`,
);

/**
 * The heartbeats heard since the last flush, all in one statement (resources/liveness.ts): each
 * machine's last one, as ms since the epoch, written where it is newer than the row's.
 */
export const heardMachines = statement<{ machineIds: string[]; at: number[] }, never>(
  "heard-machines",
  (p) => `
UPDATE "Machine" m SET "lastHeartbeatAt" = timestamp 'epoch' + v.ms * interval '1 millisecond'
FROM unnest(${p.machineIds}::text[], ${p.at}::float8[]) AS v(id, ms)
WHERE m.id = v.id AND m."lastHeartbeatAt" < timestamp 'epoch' + v.ms * interval '1 millisecond'`,
);

/**
 * Dedicated offers are decided one at a time across every Market Manager on the database
 * (resources/machines.ts): a lock held until the deciding transaction ends, taken before
 * `contractsPromised` reads what contracts promise, so two managers cannot both promise the same
 * room under an account's ceiling or the market's budget. Its own statement: a statement's
 * snapshot is taken before any lock it waits for, and would miss the row the other one wrote.
 */
export const lockContracts = statement<Record<string, never>, { locked: number }>(
  "lock-contracts",
  () => `SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(hashtext('dedicated-contracts'))) AS l`,
);

/**
 * What the active dedicated contracts still owe, whichever manager holds their machines: those of
 * one account (its ceiling, costbenefit contractCeiling) and all of them (the market's budget).
 * Micro-credits as text.
 */
export const contractsPromised = statement<{ ownerId: string }, { owner: string; market: string }>(
  "contracts-promised",
  (p) => `
SELECT coalesce(sum("contractPriceMicro" - "contractPaidMicro") FILTER (WHERE "ownerId" = ${p.ownerId}::text), 0)::text AS owner,
  coalesce(sum("contractPriceMicro" - "contractPaidMicro"), 0)::text AS market
FROM "Machine" WHERE kind = 'dedicated' AND status = 'active' AND "contractPriceMicro" IS NOT NULL`,
);

// The Market Managers of one market and what each holds (market/managers.ts, market/adopt.ts).
// Every time they compare is the database's own (`now()`), so the hosts' clocks do not matter.
import { statement } from "./statement.ts";

interface Identity {
  id: string;
  url: string;
  healthUrl: string | null;
}

/** A manager joins (again): its row stamped now, its counts reset, no longer taken over. */
export const joinManager = statement<Identity & { capacity: number }, never>(
  "join-manager",
  (p) => `
INSERT INTO market_manager (id, url, "healthUrl", capacity, "startedAt", "heartbeatAt")
VALUES (${p.id}::text, ${p.url}::text, ${p.healthUrl}::text, ${p.capacity}::int, now(), now())
ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, "healthUrl" = EXCLUDED."healthUrl", capacity = EXCLUDED.capacity,
  "startedAt" = now(), "heartbeatAt" = now(), machines = 0, jobs = 0, "tasksDone" = 0, "claimedBy" = NULL, "claimedAt" = NULL`,
);

/** Its address, once it listens. */
export const managerMoved = statement<Identity, never>(
  "manager-moved",
  (p) => `UPDATE market_manager SET url = ${p.url}::text, "healthUrl" = ${p.healthUrl}::text WHERE id = ${p.id}::text`,
);

/** Active machines without a manager (rows from before there were several) become `managerId`'s. */
export const takeUnownedMachines = statement<{ managerId: string }, never>(
  "take-unowned-machines",
  (p) => `UPDATE "Machine" SET "managerId" = ${p.managerId}::text WHERE "managerId" IS NULL AND status = 'active'`,
);

/** Open jobs without a manager become `managerId`'s. */
export const takeUnownedJobs = statement<{ managerId: string }, never>(
  "take-unowned-jobs",
  (p) => `UPDATE "Job" SET "managerId" = ${p.managerId}::text WHERE "managerId" IS NULL AND status IN ('admitted', 'running', 'delayed')`,
);

/**
 * The manager's stamp with what it holds; no row when another manager has taken it over (it
 * must then stop acting on what it held).
 */
export const stampManager = statement<{ id: string; machines: number; jobs: number; tasksDone: string }, { id: string }>(
  "stamp-manager",
  (p) => `
UPDATE market_manager SET "heartbeatAt" = now(), machines = ${p.machines}::int, jobs = ${p.jobs}::int, "tasksDone" = ${p.tasksDone}::bigint
WHERE id = ${p.id}::text AND "claimedBy" IS NULL RETURNING id`,
);

export interface ManagerRow {
  id: string;
  url: string;
  healthUrl: string | null;
  machines: number;
  jobs: number;
  capacity: number;
  /** A count as text (bigint). */
  tasksDone: string;
  /** Instants as ms since the epoch. */
  startedAt: number;
  heartbeatAt: number;
  claimedBy: string | null;
  /** How long since its stamp, by the database's clock. */
  ageMs: number;
}

/** Every manager the market has had. */
export const managerRows = statement<Record<string, never>, ManagerRow>(
  "manager-rows",
  () => `
SELECT id, url, "healthUrl", machines, jobs, capacity, "tasksDone"::text AS "tasksDone",
  (extract(epoch FROM "startedAt") * 1000)::float8 AS "startedAt", (extract(epoch FROM "heartbeatAt") * 1000)::float8 AS "heartbeatAt",
  "claimedBy", (extract(epoch FROM now() - "heartbeatAt") * 1000)::float8 AS "ageMs"
FROM market_manager ORDER BY id`,
);

/**
 * `me` claims the dead manager `dead`: only if nobody has, and its stamp is still older than the
 * timeout. The row stays locked until the transaction that moves its machines and jobs commits.
 */
export const claimDeadManager = statement<{ me: string; dead: string; timeoutMs: number }, { silentMs: number }>(
  "claim-dead-manager",
  (p) => `
UPDATE market_manager SET "claimedBy" = ${p.me}::text, "claimedAt" = now()
WHERE id = ${p.dead}::text AND id <> ${p.me}::text AND "claimedBy" IS NULL AND "heartbeatAt" < now() - ${p.timeoutMs}::float8 * interval '1 millisecond'
RETURNING (extract(epoch FROM now() - "heartbeatAt") * 1000)::float8 AS "silentMs"`,
);

/**
 * The active machines of `from` become `to`'s, read into memory by `to` at once (so any handed
 * to `from` and not yet picked up are no longer waiting to be). An admin's placement with the dead
 * manager ends with it. A row of a machine offered to several (`offered`) moves too, so that one
 * manager holds it, and departs at once (adopt.ts): the others hold rows of that machine already.
 */
export const moveManagerMachines = statement<{ from: string; to: string }, { id: string; offered: boolean }>(
  "move-manager-machines",
  (p) => `
UPDATE "Machine" SET "managerId" = ${p.to}::text, "handedAt" = NULL, "pinnedAt" = NULL, "drainingTo" = NULL, "drainingSince" = NULL
WHERE "managerId" = ${p.from}::text AND status = 'active' RETURNING id, "offerKey" IS NOT NULL AS offered`,
);

/** The managers that hold an active row of a producer's machine offered to several (its offerKey). */
export const offerHolders = statement<{ ownerId: string; offerKey: string }, { managerId: string | null }>(
  "offer-holders",
  (p) => `SELECT DISTINCT "managerId" FROM "Machine" WHERE "offerKey" = ${p.offerKey}::text AND "ownerId" = ${p.ownerId}::text AND status = 'active'`,
);

/** Every active row of these offer keys, with its manager: an admin sees one machine offered to several. */
export const offerRows = statement<{ offerKeys: string[] }, { id: string; offerKey: string; managerId: string | null }>(
  "offer-rows",
  (p) => `SELECT id, "offerKey", "managerId" FROM "Machine" WHERE "offerKey" = ANY(${p.offerKeys}::text[]) AND status = 'active'`,
);

/**
 * A manager above its fair share hands idle machines to one below it (market/machine-handoff.ts):
 * at most `count` of the candidates, each only while it is still the giver's and active, and not
 * one an admin placed with the giver (pinned). The candidates are picked once, in a CTE: a
 * locking subquery under the UPDATE may be scanned again and pick more. The machines handed.
 */
export const handMachines = statement<{ from: string; to: string; machineIds: string[]; count: number }, { id: string }>(
  "hand-machines",
  (p) => `
WITH picked AS MATERIALIZED (
  SELECT id FROM "Machine"
  WHERE id = ANY(${p.machineIds}::text[]) AND "managerId" = ${p.from}::text AND status = 'active' AND "pinnedAt" IS NULL
  ORDER BY id LIMIT ${p.count}::int FOR UPDATE
)
UPDATE "Machine" m SET "managerId" = ${p.to}::text, "handedAt" = now()
FROM picked WHERE m.id = picked.id AND m."managerId" = ${p.from}::text RETURNING m.id`,
);

/**
 * An admin moves machines from `from` to `to` (market/machine-moves.ts): as a handoff, each only
 * while it is still the giver's and active, and pinned there so the fair share leaves it (a drain
 * toward elsewhere ends with the move). The machines moved.
 */
export const adminHandMachines = statement<{ from: string; to: string; machineIds: string[] }, { id: string }>(
  "admin-hand-machines",
  (p) => `
UPDATE "Machine" SET "managerId" = ${p.to}::text, "handedAt" = now(), "pinnedAt" = now(), "drainingTo" = NULL, "drainingSince" = NULL
WHERE id = ANY(${p.machineIds}::text[]) AND "managerId" = ${p.from}::text AND status = 'active' RETURNING id`,
);

/**
 * An admin moves busy machines of `from` to `to` (market/machine-drains.ts): each, while it is
 * still `from`'s and active, drains toward `to` (a drain toward another manager is redirected).
 * The machines now draining.
 */
export const drainMachines = statement<{ from: string; to: string; machineIds: string[] }, { id: string }>(
  "drain-machines",
  (p) => `
UPDATE "Machine" SET "drainingTo" = ${p.to}::text,
  "drainingSince" = CASE WHEN "drainingTo" = ${p.to}::text THEN "drainingSince" ELSE now() END
WHERE id = ANY(${p.machineIds}::text[]) AND "managerId" = ${p.from}::text AND status = 'active' RETURNING id`,
);

/**
 * Drained machines of `from` (no lease left) go to the manager each drains toward, as an admin's
 * move does (handed, and pinned there), each only while it is still `from`'s and draining. The
 * machines handed, with where to.
 */
export const handDrainedMachines = statement<{ from: string; machineIds: string[] }, { id: string; toManagerId: string }>(
  "hand-drained-machines",
  (p) => `
UPDATE "Machine" SET "managerId" = "drainingTo", "handedAt" = now(), "pinnedAt" = now(), "drainingTo" = NULL, "drainingSince" = NULL
WHERE id = ANY(${p.machineIds}::text[]) AND "managerId" = ${p.from}::text AND status = 'active' AND "drainingTo" IS NOT NULL
RETURNING id, "managerId" AS "toManagerId"`,
);

/** Drains of `from`'s machines end without a move (an admin cancelled them, or the target is gone). The machines no longer draining. */
export const endDrains = statement<{ from: string; machineIds: string[] }, { id: string }>(
  "end-drains",
  (p) => `
UPDATE "Machine" SET "drainingTo" = NULL, "drainingSince" = NULL
WHERE id = ANY(${p.machineIds}::text[]) AND "managerId" = ${p.from}::text AND "drainingTo" IS NOT NULL RETURNING id`,
);

/** The manager that holds each of these active machines (none for a machine not in the market). */
export const machineHolders = statement<{ machineIds: string[] }, { id: string; managerId: string | null }>(
  "machine-holders",
  (p) => `SELECT id, "managerId" FROM "Machine" WHERE id = ANY(${p.machineIds}::text[]) AND status = 'active'`,
);

/** The machines handed to `managerId` and not yet read into its memory. */
export const handedMachines = statement<{ managerId: string }, { id: string }>(
  "handed-machines",
  (p) => `SELECT id FROM "Machine" WHERE "managerId" = ${p.managerId}::text AND status = 'active' AND "handedAt" IS NOT NULL`,
);

/** Handed machines `managerId` has read into memory: no longer waiting. */
export const pickedUpMachines = statement<{ managerId: string; machineIds: string[] }, never>(
  "picked-up-machines",
  (p) => `UPDATE "Machine" SET "handedAt" = NULL WHERE id = ANY(${p.machineIds}::text[]) AND "managerId" = ${p.managerId}::text`,
);

/** The open jobs of `from` become `to`'s. */
export const moveManagerJobs = statement<{ from: string; to: string }, { id: string }>(
  "move-manager-jobs",
  (p) => `UPDATE "Job" SET "managerId" = ${p.to}::text WHERE "managerId" = ${p.from}::text AND status IN ('admitted', 'running', 'delayed') RETURNING id`,
);

/**
 * The manager that holds a producer's active machine, its address, and whether it is alive (its
 * stamp within `timeoutMs` and nobody took it over). No row: the machine is not in the market, or
 * not the owner's.
 */
export const machineManager = statement<{ machineId: string; ownerId: string; timeoutMs: number }, { managerId: string | null; url: string | null; alive: boolean | null }>(
  "machine-manager",
  (p) => `
SELECT m."managerId", mm.url,
  (mm."claimedBy" IS NULL AND mm."heartbeatAt" >= now() - ${p.timeoutMs}::float8 * interval '1 millisecond') AS alive
FROM "Machine" m LEFT JOIN market_manager mm ON mm.id = m."managerId"
WHERE m.id = ${p.machineId}::text AND m."ownerId" = ${p.ownerId}::text AND m.status = 'active'`,
);

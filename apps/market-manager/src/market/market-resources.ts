// What one running market keeps besides its live state (market.ts), in one object made with the
// market and reached through it (`market.resources`): its ways to the database, its operators'
// metrics, the caches and counts its steps share. Nothing of it lives in a module: two markets in
// one process (tests) share none of it, and whatever a step uses of it is named here.
import { LRUCache } from "lru-cache";
import type { Database } from "../db/client.ts";
import type { Ops } from "../ops/ops.ts";
import type { IntakePool } from "../tasks/intake-pool.ts";
import type { Ending } from "../tasks/cancel.ts";
import type { ReportBatch } from "../tasks/report-batch.ts";
import type { LeaseCall } from "../resources/leases.ts";

/** A count kept for one version of the live state (`Market.revision`); none is kept at first. */
export interface AtRevision<T> {
  revision: number;
  value: T;
}

export class MarketResources {
  /** Operators' metrics and the decisions counted since the last history sample (ops/ops.ts opsOf). */
  ops: Ops | undefined;
  /** The ledger's charges of the jobs settled by `through`, summed once (ops/sampler.ts). */
  chargedKept = { through: 0, sum: 0n };

  /** The intake threads, started on the first submission (tasks/intake-pool.ts intakePoolOf). */
  intakePool: IntakePool | undefined;
  /** Tasks of each user's jobs being taken in, counted against the queued-tasks quota (tasks/intake.ts). */
  readonly inIntake = new Map<string, number>();
  /**
   * Modules this process has stored: a module row is never removed, so a submission sending one of
   * them again skips sending its bytes (tasks/jobs.ts). One forgotten only costs a statement.
   */
  readonly storedModules = new LRUCache<string, true>({ max: 10_000 });
  /** Rights to name a module this process has seen, `hash userId`: never taken back (tasks/module-rights.ts). */
  readonly moduleRights = new LRUCache<string, true>({ max: 50_000 });
  /** Jobs that left the live market on their consumer's word, their cancellation not yet committed (tasks/cancel.ts). */
  readonly endings = new Map<string, Ending>();
  /** Machines an admission still being written leases to (tasks/admission-leases.ts). */
  readonly admissionLeases = new Map<string, number>();

  /** Users seen granted their starting credits, and users seen without a role chosen (ledger/starting-credits.ts). */
  readonly granted = new Set<string>();
  readonly unchosen = new Set<string>();
  /** When this manager last looked for forgers another manager caught (market/standing.ts learnForgeries). */
  forgersLookedAt: number | undefined;

  /** The lease calls waiting for their group commit (resources/leases.ts). */
  leaseCalls: ReportBatch<LeaseCall> | undefined;
  /** Whether any machine holds queued work another could take (resources/leases.ts), and the spare queued tasks (market/work-routes.ts). */
  workElsewhere: AtRevision<boolean> = { revision: -1, value: false };
  spareTasks: AtRevision<number> = { revision: -1, value: 0 };

  constructor(readonly database: Database) {}
}

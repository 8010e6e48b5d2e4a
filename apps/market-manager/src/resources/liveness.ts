import type { Db } from "../db/client.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { heardMachines } from "../db/sql/machine-rows.ts";

/** Heard heartbeats reach PostgreSQL this often, all in one statement. */
export const LIVENESS_FLUSH_MS = 1000;

/**
 * A machine is alive when its heartbeat arrives: memory says so at once, without waiting for the
 * market's lock or the database. PostgreSQL learns it lazily, in batches: nothing is lost if the
 * manager dies first, because a restart gives every machine and lease a fresh timeout anyway
 * (restore.ts, forgiveSilence), and the database's copy is only read then and by views.
 */
export class Liveness {
  private machines = new Map<string, number>();

  constructor(private db: Db) {}

  heard(machineId: string, at: number) {
    this.machines.set(machineId, at);
  }

  /** Writes what was heard since the last flush; on failure it is kept for the next one. */
  async flush() {
    if (!this.machines.size) return;
    const machines = this.machines;
    this.machines = new Map();
    try {
      // Times go as epoch milliseconds and become the columns' UTC timestamps in SQL.
      await runStatement(viaPrisma(this.db), heardMachines, { machineIds: [...machines.keys()], at: [...machines.values()] });
    } catch (e) {
      for (const [id, at] of machines) if (!this.machines.has(id)) this.machines.set(id, at);
      throw e;
    }
  }
}

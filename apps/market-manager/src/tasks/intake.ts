import type { Database, Db } from "../db/client.ts";
import type { Tx } from "../ledger/ledger.ts";
import { runStatement, type Runner } from "../db/sql/statement.ts";
import { prepared, viaPrisma } from "../db/sql/runners.ts";
import { insertTasks as insertTasksStatement, queueOnMachines as queueStatement } from "../db/sql/task-rows.ts";
import type { Market } from "../market/market.ts";

// A job's tasks are written to the database in chunks before the market's lock is taken, so a
// 10,000-task job (up to 32 MB of inputs) never holds other users' calls while it is stored;
// inside the lock only the decision and its placements are written, a few statements per job.
// A small job (admission.ts INLINE_INTAKE_TASKS) skips this: its admission's statement inserts it.

/** Rows per statement: a chunk of tasks with 1 KB of stdin each is about a megabyte. */
export const TASK_CHUNK = 1000;

/**
 * A job being taken in (its row and tasks stored, the market not asked yet) is `delayed` with no
 * `decidedAt`. The market never decides on such a job: a start after a crash mid-intake removes
 * it (its consumer got no answer, and was charged nothing), see `discardUnfinishedIntake`.
 */
export const INTAKE = { status: "delayed" as const, decidedAt: null };

/** Removes jobs whose intake a crash interrupted, with their tasks (see `discardIntake`). */
export async function discardUnfinishedIntake(db: Db, managerId: string): Promise<number> {
  // Only the manager's own: another manager's intake may be under way right now.
  const ids = (await db.job.findMany({ where: { ...INTAKE, managerId }, select: { id: true } })).map((j) => j.id);
  let count = 0;
  for (const id of ids) if (await discardIntake(db, id)) count++;
  return count;
}

/**
 * Removes a job still in intake (its admission failed before a decision, or a crash interrupted
 * it) and its tasks, as a cascade did (a task row has no foreign key on its job, migration
 * 20261126190000_task_rows_unchecked). The job goes first: its delete waits for a chunk of its
 * tasks being inserted (which key-share locks its row, insertTasks) and any later chunk finds no
 * job and fails, so the tasks' delete, a statement after, sees every task that was stored. A job
 * decided meanwhile matches nothing and keeps its tasks. Whether the job was removed.
 */
export async function discardIntake(db: Db, jobId: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const { count } = await tx.job.deleteMany({ where: { id: jobId, ...INTAKE } });
    if (count > 0) await tx.task.deleteMany({ where: { jobId } });
    return count > 0;
  });
}

export interface NewTask {
  id: string;
  index: number;
  replica: number;
  args: string[];
  stdin: Buffer;
  env?: Record<string, string> | null;
  files?: Record<string, string> | null;
}

/**
 * A job's tasks, `pending` and on no machine, a chunk per statement (other requests are served
 * between chunks; db/sql/task-rows.ts insertTasks). `run` is the market's database (calls made in
 * the process) or an intake thread's own connection. On the market's database the statement goes
 * straight to Prisma's pool, prepared once per connection: through the client's raw query, its
 * checks of every array element were a large share of the market's thread for big jobs
 * (bench:dispatch --profile with jobs of 1,000 tasks).
 */
export async function insertTasks(run: Database | Runner, jobId: string, tasks: NewTask[]) {
  const execute = typeof run === "function" ? run : prepared(run.shared);
  const json = (v: Record<string, string> | null | undefined) => (v ? JSON.stringify(v) : null);
  for (let i = 0; i < tasks.length; i += TASK_CHUNK) {
    const chunk = tasks.slice(i, i + TASK_CHUNK);
    await runStatement(execute, insertTasksStatement, {
      jobId,
      ids: chunk.map((t) => t.id),
      indexes: chunk.map((t) => t.index),
      replicas: chunk.map((t) => t.replica),
      args: chunk.map((t) => JSON.stringify(t.args)),
      stdins: chunk.map((t) => t.stdin),
      envs: chunk.map((t) => json(t.env)),
      files: chunk.map((t) => json(t.files)),
    });
  }
}

/** The engine's placements in one statement (db/sql/task-rows.ts queueOnMachines). */
export async function queueOnMachines(tx: Tx, placed: Map<string, string>) {
  if (placed.size === 0) return;
  await runStatement(viaPrisma(tx), queueStatement, { taskIds: [...placed.keys()], machineIds: [...placed.values()] });
}

/**
 * Tasks of a user's jobs being taken in: they count against the queued-tasks quota like tasks
 * in the market, so parallel submissions cannot pass it while their tasks are being stored.
 */
export function tasksInIntake(market: Market, userId: string): number {
  return market.resources.inIntake.get(userId) ?? 0;
}

/** Counts `tasks` as in intake for `userId` until the returned function is called. */
export function holdIntake(market: Market, userId: string, tasks: number): () => void {
  const counts = market.resources.inIntake;
  counts.set(userId, (counts.get(userId) ?? 0) + tasks);
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    const left = (counts.get(userId) ?? 0) - tasks;
    if (left > 0) counts.set(userId, left);
    else counts.delete(userId);
  };
}

import { poolOf, type Db } from "../db/client.ts";
import { preparedParameter } from "../db/array-literal.ts";
import type { Tx } from "../ledger/ledger.ts";
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
 * between chunks). One statement takes a chunk as a few arrays (`unnest`): the client's
 * `createMany` builds ten parameters per row on the event loop, which measured 4.5 s for 10,000
 * tasks with 1 KB of stdin each against 0.95 s this way on the same machine. `run` is the
 * market's client (calls made in the process) or an intake thread's own connection. On the
 * market's client the statement goes straight to its pool, prepared once per connection: through
 * the client's raw query, its checks of every array element took about 13 ms of the market's
 * thread per 1,000-task chunk (bench:dispatch, 20 jobs of 1,000 tasks), 8% of its CPU.
 */
export async function insertTasks(run: Db | ((sql: string, values: unknown[]) => Promise<unknown>), jobId: string, tasks: NewTask[]) {
  const execute = typeof run === "function" ? run : direct(run);
  const json = (v: Record<string, string> | null | undefined) => (v ? JSON.stringify(v) : null);
  for (let i = 0; i < tasks.length; i += TASK_CHUNK) {
    const chunk = tasks.slice(i, i + TASK_CHUNK);
    // The job's row, key-share locked once for the chunk (a task row has no foreign key on it,
    // migration 20261126190000_task_rows_unchecked): a job that is gone gives a null job id,
    // which the column refuses, and the chunk fails whole.
    await execute(
      `WITH job AS (SELECT id FROM "Job" WHERE id = $1 FOR KEY SHARE)
       INSERT INTO "Task" ("id", "jobId", "index", "replica", "args", "stdin", "env", "files", "status")
       SELECT t.id, (SELECT id FROM job), t.idx, t.replica, ARRAY(SELECT jsonb_array_elements_text(t.args)), t.stdin, t.env, t.files, 'pending'
       FROM unnest($2::text[], $3::int[], $4::int[], $5::jsonb[], $6::bytea[], $7::jsonb[], $8::jsonb[]) AS t(id, idx, replica, args, stdin, env, files)`,
      [
        jobId,
        chunk.map((t) => t.id),
        chunk.map((t) => t.index),
        chunk.map((t) => t.replica),
        chunk.map((t) => JSON.stringify(t.args)),
        chunk.map((t) => t.stdin),
        chunk.map((t) => json(t.env)),
        chunk.map((t) => json(t.files)),
      ],
    );
  }
}

/** The market's client's pool, to run the task chunks' statement on (see insertTasks); its raw query for a client made otherwise. */
function direct(db: Db) {
  const pool = poolOf(db);
  if (!pool) return (sql: string, values: unknown[]) => db.$executeRawUnsafe(sql, ...values);
  return (sql: string, values: unknown[]) => pool.query({ name: "insert-tasks", text: sql, values: values.map(preparedParameter) });
}

/**
 * The engine's placements in one statement, the task and machine ids as two arrays: per machine
 * and chunk of 1,000 ids, the client built and compiled each `IN` list on the market's thread
 * while the market's lock was held (a delayed 10,000-task job admitted: 0.1 s and more).
 */
export async function queueOnMachines(tx: Tx, placed: Map<string, string>) {
  if (placed.size === 0) return;
  await tx.$executeRaw`
    UPDATE "Task" t SET "machineId" = p.machine, status = 'queued'
    FROM unnest(${[...placed.keys()]}::text[], ${[...placed.values()]}::text[]) AS p(id, machine) WHERE t.id = p.id`;
}

const inIntake = new WeakMap<Market, Map<string, number>>();

/**
 * Tasks of a user's jobs being taken in: they count against the queued-tasks quota like tasks
 * in the market, so parallel submissions cannot pass it while their tasks are being stored.
 */
export function tasksInIntake(market: Market, userId: string): number {
  return inIntake.get(market)?.get(userId) ?? 0;
}

/** Counts `tasks` as in intake for `userId` until the returned function is called. */
export function holdIntake(market: Market, userId: string, tasks: number): () => void {
  const counts = inIntake.get(market) ?? new Map<string, number>();
  inIntake.set(market, counts);
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

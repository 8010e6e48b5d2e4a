import { statement } from "./statement.ts";

export interface InsertTasksParams {
  jobId: string;
  // One element per task.
  ids: string[];
  indexes: number[];
  replicas: number[];
  /** Each task's args as a JSON array. */
  args: string[];
  stdins: Uint8Array[];
  /** JSON objects, or null. */
  envs: (string | null)[];
  files: (string | null)[];
}

/**
 * A chunk of a job's tasks, `pending` and on no machine (tasks/intake.ts), taken as a few arrays
 * (`unnest`): the client's `createMany` builds ten parameters per row on the event loop, several
 * times slower for a big job. The job's row is key-share locked once for the chunk (a task row has
 * no foreign key on it, migration 20261126190000_task_rows_unchecked): a job that is gone gives a
 * null job id, which the column refuses, and the chunk fails whole.
 */
export const insertTasks = statement<InsertTasksParams, never>(
  "insert-tasks",
  (p) => `WITH job AS (SELECT id FROM "Job" WHERE id = ${p.jobId} FOR KEY SHARE)
       INSERT INTO "Task" ("id", "jobId", "index", "replica", "args", "stdin", "env", "files", "status")
       SELECT t.id, (SELECT id FROM job), t.idx, t.replica, ARRAY(SELECT jsonb_array_elements_text(t.args)), t.stdin, t.env, t.files, 'pending'
       FROM unnest(${p.ids}::text[], ${p.indexes}::int[], ${p.replicas}::int[], ${p.args}::jsonb[], ${p.stdins}::bytea[], ${p.envs}::jsonb[], ${p.files}::jsonb[]) AS t(id, idx, replica, args, stdin, env, files)`,
);

/**
 * The engine's placements in one statement, the task and machine ids as two arrays: per machine
 * and chunk of ids, the client built and compiled each `IN` list on the market's thread while the
 * market's lock was held.
 */
export const queueOnMachines = statement<{ taskIds: string[]; machineIds: string[] }, never>(
  "queue-on-machines",
  (p) => `
UPDATE "Task" t SET "machineId" = p.machine, status = 'queued'
FROM unnest(${p.taskIds}::text[], ${p.machineIds}::text[]) AS p(id, machine) WHERE t.id = p.id`,
);

export interface MoveTasksParams {
  taskIds: string[];
  machineIds: string[];
  // One decision-log row per move.
  decisionIds: string[];
  at: number[];
  jobIds: (string | null)[];
  userIds: (string | null)[];
  /** JSON. */
  reasons: string[];
  details: string[];
}

/** Rebalanced tasks and their entries in the decision log (market/rebalance.ts), one statement; a task leased meanwhile keeps its row. */
export const moveTasks = statement<MoveTasksParams, { moved: string; decisions: string }>(
  "rebalance",
  (p) => `
WITH moved AS (
  UPDATE "Task" t SET "machineId" = m.machine
  FROM unnest(${p.taskIds}::text[], ${p.machineIds}::text[]) AS m(id, machine) WHERE t.id = m.id AND t.id = ANY(${p.taskIds}::text[]) AND t.status = 'queued'::"TaskStatus"
  RETURNING 1
), decisions AS (
  INSERT INTO "MarketDecision" (id, at, outcome, "jobId", "machineId", "userId", tasks, reasons, detail)
  SELECT d.id, timestamp 'epoch' + d.at * interval '1 millisecond', 'move'::"DecisionOutcome", d.job, d.machine, d.owner, 1, d.reasons::jsonb, d.detail::jsonb
  FROM unnest(${p.decisionIds}::text[], ${p.at}::float8[], ${p.jobIds}::text[], ${p.machineIds}::text[], ${p.userIds}::text[], ${p.reasons}::text[], ${p.details}::text[])
    AS d(id, at, job, machine, owner, reasons, detail)
  RETURNING 1
)
SELECT (SELECT count(*) FROM moved)::text AS moved, (SELECT count(*) FROM decisions)::text AS decisions`,
);

/** A job's tasks from `fromIndex` on, each with its input's size (not its input): the rest of a job after its pilots (market/remainder.ts). */
export const tasksFrom = statement<{ jobId: string; fromIndex: number }, { id: string; index: number; replica: number; bytes: number }>(
  "tasks-from",
  (p) => `
SELECT "id", "index", "replica", octet_length("stdin") AS "bytes" FROM "Task"
WHERE "jobId" = ${p.jobId} AND "index" >= ${p.fromIndex} ORDER BY "index", "replica"`,
);

/** A run's work sample added to its job's, and the work per task the job's leases are fixed at from now on. */
export const addWorkSample = statement<{ jobId: string; samples: string; workPerTask: number }, never>(
  "add-work-sample",
  (p) => `UPDATE "Job" SET "workSamples" = "workSamples" || ${p.samples}::jsonb, "workPerTask" = ${p.workPerTask}::float8 WHERE id = ${p.jobId}`,
);

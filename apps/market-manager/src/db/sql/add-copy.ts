import { statement } from "./statement.ts";

export interface AddCopyParams {
  /** The task copied (any copy: they share their inputs). */
  fromTaskId: string;
  copyId: string;
  replica: number;
}

/**
 * One more copy of a task, added by verification (costbenefit quorum.ts `addCopy`): the same
 * inputs, waiting for a machine. Refused by the unique (job, index, replica) if it exists.
 */
export const addTaskCopy = statement<AddCopyParams, { id: string }>(
  "add-task-copy",
  (p) => `
INSERT INTO "Task" (id, "jobId", index, replica, args, stdin, env, files, status, attempts)
SELECT ${p.copyId}, t."jobId", t.index, ${p.replica}::int, t.args, t.stdin, t.env, t.files, 'pending'::"TaskStatus", 0
FROM "Task" t WHERE t.id = ${p.fromTaskId}
RETURNING id`,
);

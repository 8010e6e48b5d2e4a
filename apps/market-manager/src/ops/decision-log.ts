import { z } from "zod";
import type { Db } from "../db/client.ts";
import { DecisionOutcome } from "../db/generated/enums.ts";
import { Reasons } from "../tasks/stored-reasons.ts";

export const DecisionFilter = z.object({
  jobId: z.string().uuid("Not a job id.").optional(),
  machineId: z.string().uuid("Not a machine id.").optional(),
  /** A user's email address (the job's owner, or the machine's). */
  user: z.string().trim().max(254, "An email address has at most 254 characters.").optional(),
  outcome: z.enum(Object.values(DecisionOutcome) as [DecisionOutcome, ...DecisionOutcome[]]).optional(),
  /** Where the previous page ended (its `next`). */
  cursor: z.string().max(100).nullish(),
  pageSize: z.number().int().min(1).max(200).default(50),
});
export type DecisionFilter = z.infer<typeof DecisionFilter>;

const decode = (cursor: string) => {
  const at = Number(cursor.split("_")[0]);
  const id = cursor.slice(cursor.indexOf("_") + 1);
  return Number.isFinite(at) && id ? { at: new Date(at), id } : null;
};

/** The decision log, newest first, a page at a time (keyset paging: stable while new decisions arrive). */
export async function listDecisions(db: Db, f: DecisionFilter & { jobIds?: string[] | undefined }) {
  const user = f.user ? await db.user.findUnique({ where: { email: f.user.toLowerCase() }, select: { id: true } }) : null;
  if (f.user && !user) return { decisions: [], next: null };
  const after = f.cursor ? decode(f.cursor) : null;
  const rows = await db.marketDecision.findMany({
    where: {
      // A job split across managers: its parts' decisions (tasks/split-view.ts).
      ...(f.jobIds ? { jobId: { in: f.jobIds } } : f.jobId ? { jobId: f.jobId } : {}),
      ...(f.machineId ? { machineId: f.machineId } : {}),
      ...(user ? { userId: user.id } : {}),
      ...(f.outcome ? { outcome: f.outcome } : {}),
      ...(after ? { OR: [{ at: { lt: after.at } }, { at: after.at, id: { lt: after.id } }] } : {}),
    },
    orderBy: [{ at: "desc" }, { id: "desc" }],
    take: f.pageSize + 1,
  });
  const page = rows.slice(0, f.pageSize);
  const [jobs, machines, users] = await Promise.all([
    db.job.findMany({ where: { id: { in: [...new Set(page.flatMap((r) => (r.jobId ? [r.jobId] : [])))] } }, select: { id: true, name: true } }),
    db.machine.findMany({ where: { id: { in: [...new Set(page.flatMap((r) => (r.machineId ? [r.machineId] : [])))] } }, select: { id: true, name: true } }),
    db.user.findMany({ where: { id: { in: [...new Set(page.flatMap((r) => (r.userId ? [r.userId] : [])))] } }, select: { id: true, email: true } }),
  ]);
  const name = <T extends { id: string }>(list: T[], id: string | null, key: keyof T) => (id ? ((list.find((x) => x.id === id)?.[key] as string | undefined) ?? null) : null);
  const last = page[page.length - 1];
  return {
    decisions: page.map((r) => ({
      id: r.id,
      at: r.at.getTime(),
      outcome: r.outcome,
      jobId: r.jobId,
      jobName: name(jobs, r.jobId, "name"),
      machineId: r.machineId,
      machineName: name(machines, r.machineId, "name"),
      user: name(users, r.userId, "email"),
      tasks: r.tasks,
      reasons: Reasons.parse(r.reasons),
      detail: (r.detail ?? null) as Record<string, unknown> | null,
    })),
    next: rows.length > f.pageSize && last ? `${last.at.getTime()}_${last.id}` : null,
  };
}
export type DecisionPage = Awaited<ReturnType<typeof listDecisions>>;

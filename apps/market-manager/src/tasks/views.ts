import type { Db } from "../db/client.ts";

// What the API shows of jobs: plain JSON (ISO dates, credits as numbers for display); the exact
// integer amounts stay in the ledger.

const MICRO = 1_000_000;
export const credits = (micro: bigint | null | undefined) => (micro == null ? null : Number(micro) / MICRO);
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export async function jobSummaries(db: Db, where: { ownerId?: string }) {
  const jobs = await db.job.findMany({
    where,
    orderBy: { submittedAt: "desc" },
    take: 200,
    include: { owner: { select: { email: true } } },
  });
  return jobs.map((j) => ({
    id: j.id,
    name: j.name,
    owner: j.owner.email,
    example: j.example,
    status: j.status,
    taskCount: j.taskCount,
    tasksDone: j.tasksDone,
    submittedAt: iso(j.submittedAt)!,
    completedAt: iso(j.completedAt),
    quotedPrice: credits(j.quotedPriceMicro),
    charged: credits(j.chargedMicro),
  }));
}

export async function jobView(db: Db, jobId: string) {
  const j = await db.job.findUniqueOrThrow({ where: { id: jobId } });
  const byStatus = await db.task.groupBy({ by: ["status"], where: { jobId }, _count: { _all: true } });
  const counts = Object.fromEntries(byStatus.map((g) => [g.status, g._count._all])) as Record<string, number>;
  const machines = await db.result.groupBy({ by: ["machineId"], where: { task: { jobId }, accepted: true }, _count: { _all: true } });
  const names = await db.machine.findMany({ where: { id: { in: machines.map((m) => m.machineId) } }, select: { id: true, name: true, kind: true } });
  return {
    id: j.id,
    name: j.name,
    example: j.example,
    status: j.status,
    benefit: j.benefit,
    decision: j.decision,
    replicas: j.replicas,
    taskCount: j.taskCount,
    tasksDone: j.tasksDone,
    tasks: {
      pending: counts.pending ?? 0,
      queued: counts.queued ?? 0,
      leased: counts.leased ?? 0,
      done: counts.done ?? 0,
      failed: counts.failed ?? 0,
    },
    workPerTask: j.workPerTask,
    submittedAt: iso(j.submittedAt)!,
    decidedAt: iso(j.decidedAt),
    expectedCompletionAt: iso(j.expectedCompletionAt),
    completedAt: iso(j.completedAt),
    quotedPrice: credits(j.quotedPriceMicro),
    charged: credits(j.chargedMicro),
    result: j.result,
    machines: machines.map((m) => ({ ...names.find((n) => n.id === m.machineId), tasks: m._count._all })),
  };
}

/** Finished tasks' outputs in index order, for pages that draw results as they arrive. */
export async function jobOutputs(db: Db, jobId: string, fromIndex: number, limit: number) {
  const tasks = await db.task.findMany({
    where: { jobId, status: "done", index: { gte: fromIndex } },
    orderBy: { index: "asc" },
    take: limit,
    select: { index: true, args: true, results: { where: { accepted: true }, take: 1, select: { stdout: true, elapsedMs: true, machineId: true } } },
  });
  return tasks.map((t) => ({
    index: t.index,
    args: t.args,
    stdout: Buffer.from(t.results[0]?.stdout ?? []).toString("utf8"),
    elapsedMs: t.results[0]?.elapsedMs ?? null,
    machineId: t.results[0]?.machineId ?? null,
  }));
}

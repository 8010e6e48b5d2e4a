import { statement } from "./statement.ts";

export interface PaidForJobParams {
  jobId: string;
  producerId: string;
}

/** What a job's tasks paid one producer's machines so far, and what its producer account holds now. */
export const paidForJob = statement<PaidForJobParams, { paid: bigint | null; balance: bigint | null }>(
  "paid-for-job",
  (p) => `
SELECT (SELECT sum(r."paidMicro")::bigint FROM "Task" t JOIN "Lease" l ON l."taskId" = t.id JOIN "Result" r ON r.id = l.id JOIN "Machine" m ON m.id = l."machineId"
        WHERE t."jobId" = ${p.jobId} AND m."ownerId" = ${p.producerId} AND r."paidMicro" > 0) AS paid,
       (SELECT a."balanceMicro" - a."minBalanceMicro" FROM "LedgerAccount" a WHERE a.kind = 'producer' AND a."userId" = ${p.producerId}) AS balance`,
);

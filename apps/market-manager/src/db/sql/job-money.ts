// What a job's ledger and results say it paid, holds and took in: the reads its settlement, its
// pieces' payer and its restore make.
import { WORKER_TROUBLE_CODES } from "@cyclemarket/costbenefit";
import { statement } from "./statement.ts";

interface JobParams {
  jobId: string;
}

/**
 * What producers were paid for the job named by `job` (a placeholder, column or expression of the
 * statement it is part of) so far, as text: the producers' postings of its payment entries (from
 * its escrow or, for what the escrow did not cover, from the market). One definition for the
 * settlement and the job page (job-page.ts).
 */
export const paidForJobSql = (job: string) =>
  `SELECT coalesce(sum(p."amountMicro"), 0)::text FROM "LedgerPosting" p JOIN "LedgerEntry" e ON e.id = p."entryId" JOIN "LedgerAccount" a ON a.id = p."accountId"
     WHERE e."jobId" = ${job} AND e.kind = 'payment' AND a.kind = 'producer'::"AccountKind"`;

/** The held pieces of a job's late runs, in the order they were accepted, with who ran them and from where. */
export const latePieces = statement<JobParams, { ownerId: string; network: string | null; held: string }>(
  "late-pieces",
  (p) => `
SELECT m."ownerId", m.network, r."heldMicro"::text AS held FROM "Task" t JOIN "Lease" l ON l."taskId" = t.id JOIN "Result" r ON r.id = l.id JOIN "Machine" m ON m.id = l."machineId"
WHERE t."jobId" = ${p.jobId} AND r."heldMicro" > 0 ORDER BY r."createdAt", r.id`,
);

/** The held pieces of a job's late runs summed by the producer who ran them. */
export const heldByProducer = statement<JobParams, { ownerId: string; held: string }>(
  "held-by-producer",
  (p) => `
SELECT m."ownerId", sum(r."heldMicro")::text AS held FROM "Task" t JOIN "Lease" l ON l."taskId" = t.id JOIN "Result" r ON r.id = l.id JOIN "Machine" m ON m.id = l."machineId"
WHERE t."jobId" = ${p.jobId} AND r."heldMicro" > 0 GROUP BY m."ownerId" ORDER BY m."ownerId"`,
);

/** The failure codes of a worker's own trouble (costbenefit programFailure), as an SQL array of constants. */
const workerTrouble = `ARRAY[${WORKER_TROUBLE_CODES.map((c) => `'${c}'`).join(", ")}]::text[]`;

/**
 * What the consumer put in the job's escrow (Job.escrowMicro), the price it was admitted at (null:
 * none yet), its tasks, those done and those not done with a failed run no other owner confirmed
 * that can be the program's (a worker's own trouble answers nothing; costbenefit
 * settleUnfinishedJob), and whether it still runs its pilots; no row for a job that is not there.
 */
export const jobDeposit = statement<JobParams, { escrow: string; price: string | null; tasks: number; done: number; failed: number; provisional: boolean }>(
  "job-deposit",
  (p) => `
SELECT j."escrowMicro"::text AS escrow, j."quotedPriceMicro"::text AS price, j."taskCount" AS tasks, j."tasksDone" AS done, j."workEstimate" = 'provisional' AS provisional,
  (SELECT count(DISTINCT t.index)::int FROM "Task" t JOIN "Lease" l ON l."taskId" = t.id JOIN "Result" r ON r.id = l.id
     WHERE t."jobId" = j.id AND r.failure IS NOT NULL AND NOT r."failureConfirmed" AND r.failure <> ALL(${workerTrouble})
       AND NOT EXISTS (SELECT 1 FROM "Task" c JOIN "Lease" cl ON cl."taskId" = c.id JOIN "Result" cr ON cr.id = cl.id
                       WHERE c."jobId" = j.id AND c.index = t.index AND (c.status = 'done'::"TaskStatus" OR cr."failureConfirmed"))) AS failed
FROM "Job" j WHERE j.id = ${p.jobId}`,
);

/** What the job's late runs hold in its escrow, all together (null: nothing). */
export const heldForJob = statement<JobParams, { held: string | null }>(
  "held-for-job",
  (p) => `SELECT sum(r."heldMicro")::text AS held FROM "Task" t JOIN "Lease" l ON l."taskId" = t.id JOIN "Result" r ON r.id = l.id WHERE t."jobId" = ${p.jobId} AND r."heldMicro" > 0`,
);

/** What the job's escrow account holds now and what its late runs hold of it (null: no account, nothing held). */
export const escrowAndHeld = statement<JobParams, { inEscrow: string | null; held: string | null }>(
  "escrow-and-held",
  (p) => `
SELECT (SELECT "balanceMicro"::text FROM "LedgerAccount" WHERE "jobId" = ${p.jobId}) AS "inEscrow",
  (SELECT sum(r."heldMicro")::text FROM "Task" t JOIN "Lease" l ON l."taskId" = t.id JOIN "Result" r ON r.id = l.id WHERE t."jobId" = ${p.jobId} AND r."heldMicro" > 0) AS held`,
);

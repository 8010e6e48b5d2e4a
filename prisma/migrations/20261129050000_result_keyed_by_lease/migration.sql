-- A result is its lease's run, at most one per lease: it takes its lease's id, and the primary key
-- alone holds "one result per lease", so the lease column and its unique key go (a key entry and
-- 16 bytes less per run, in the table, its index and the write-ahead log). Results written before
-- are renumbered to their leases' ids, and what names them follows: a task's accepted result and
-- the payment key of a run paid alone (ledger/entries.ts piece: `pay:<result>`). The result's
-- foreign keys stay absent (migration 20261124081500_result_rows_unchecked): every statement that
-- inserts a result updates its lease in the same atomic unit.
UPDATE "Task" t SET "acceptedResultId" = r."leaseId" FROM "Result" r WHERE t."acceptedResultId" = r.id AND r.id <> r."leaseId";
UPDATE "LedgerEntry" e SET "uniqueKey" = 'pay:' || r."leaseId" FROM "Result" r WHERE e."uniqueKey" = 'pay:' || r.id AND r.id <> r."leaseId";
UPDATE "Result" SET id = "leaseId" WHERE id <> "leaseId";
DROP INDEX "Result_leaseId_key";
ALTER TABLE "Result" DROP COLUMN "leaseId";

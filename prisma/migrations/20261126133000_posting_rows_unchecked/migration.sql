-- A posting is appended twice per paid run and never updated or deleted. Its two foreign keys each
-- cost a trigger per row that ran a query and key-share locked the parent: a quarter of the time
-- of the plain reports statement (EXPLAIN ANALYZE of a group of 128 reports: 3.4 of 13.5 ms in 512
-- trigger calls). Every statement that inserts postings proves their parents in the same atomic
-- unit instead, as the result rows do (migration 20261124081500_result_rows_unchecked):
-- - the entry: inserted by the same statement or transaction, under its unique key, and the
--   posting names the id it inserted (ledger/ledger.ts post: the entry it created, the plain
--   reports statement in tasks/report-rows.ts and an admission in tasks/admission.ts: the ids of
--   their entries CTE),
-- - the account: the row the same statement or transaction updated or upserted for that posting
--   and took the id from (move and credit in ledger.ts return the id of the row they changed, the
--   statements join their postings to the RETURNING of their account updates and upserts).
-- The changed rows are locked until the commit, more strongly than the key-share lock the checks
-- took. Nothing deletes an entry or an account (the ledger is append-only, and a job deleted before
-- admission never had either), so the parents outlive their postings.
-- schema.prisma keeps the relations (Prisma reads join them), only the constraints go.
ALTER TABLE "LedgerPosting" DROP CONSTRAINT "LedgerPosting_entryId_fkey";
ALTER TABLE "LedgerPosting" DROP CONSTRAINT "LedgerPosting_accountId_fkey";

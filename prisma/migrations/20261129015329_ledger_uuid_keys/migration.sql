-- The ledger's ids become PostgreSQL's uuid, 16 bytes, in place of their 37-byte text: every id
-- the market gives an entry, a posting or an account is a UUID already (db/row-id.ts, and
-- gen_random_uuid for an account). A paid task writes an entry and two postings, each row holding
-- one to three of these ids and each of their five keys holding one: all of them narrower, in the
-- table, in its indexes and in the write-ahead log. The columns are converted in place (their
-- indexes are rebuilt with their settings, and the postings' foreign keys stay absent, migration
-- 20261126133000_posting_rows_unchecked).
ALTER TABLE "LedgerAccount" ALTER COLUMN "id" TYPE uuid USING "id"::uuid;
ALTER TABLE "LedgerEntry" ALTER COLUMN "id" TYPE uuid USING "id"::uuid;
ALTER TABLE "LedgerPosting" ALTER COLUMN "id" TYPE uuid USING "id"::uuid,
  ALTER COLUMN "entryId" TYPE uuid USING "entryId"::uuid,
  ALTER COLUMN "accountId" TYPE uuid USING "accountId"::uuid;

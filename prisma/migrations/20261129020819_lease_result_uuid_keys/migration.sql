-- Leases' and results' ids become PostgreSQL's uuid, 16 bytes, in place of their 37-byte text, as
-- the ledger's did (migration 20261129015329_ledger_uuid_keys): every lease and result id the
-- market makes is a UUID already (db/row-id.ts, or the client's uuid default). A run's lease row,
-- its result row (its id and its lease's) and its task's accepted result hold them, and three keys
-- (Lease_pkey, Result_pkey, Result_leaseId_key): all narrower, in the tables, their indexes and the
-- write-ahead log. Tasks' ids stay text: a task's copies are named after it (market/live.ts
-- replicaId). The columns are converted in place (the tables keep their fill factors, the indexes
-- are rebuilt with theirs, and the result's foreign keys, dropped by migration
-- 20261124081500_result_rows_unchecked, stay absent).
ALTER TABLE "Lease" ALTER COLUMN "id" TYPE uuid USING "id"::uuid;
ALTER TABLE "Result" ALTER COLUMN "id" TYPE uuid USING "id"::uuid,
  ALTER COLUMN "leaseId" TYPE uuid USING "leaseId"::uuid;
ALTER TABLE "Task" ALTER COLUMN "acceptedResultId" TYPE uuid USING "acceptedResultId"::uuid;

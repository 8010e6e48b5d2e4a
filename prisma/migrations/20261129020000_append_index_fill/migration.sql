-- These keys only grow, and no other writer's keys interleave with them: the time-ordered ids of
-- leases, results and ledger entries (db/row-id.ts) and a posting's entry. Every insert lands on
-- the last leaf, and when that leaf is full PostgreSQL splits it leaving the left page as full as
-- the fill factor says: the default, 90, leaves a tenth of every page empty for inserts that never
-- come, and the split logs that tenth moved to the new page. Filled whole, there are fewer splits
-- and each logs less. Keys that interleave (a task's job and index, tasks' ids made by concurrent
-- intakes, entries' unique keys of several kinds) split in the middle of full pages instead and
-- log more, so they keep the default.
ALTER INDEX "Lease_pkey" SET (fillfactor = 100);
ALTER INDEX "Result_pkey" SET (fillfactor = 100);
ALTER INDEX "Result_leaseId_key" SET (fillfactor = 100);
ALTER INDEX "LedgerEntry_pkey" SET (fillfactor = 100);
ALTER INDEX "LedgerPosting_entryId_idx" SET (fillfactor = 100);

-- DropIndex
DROP INDEX "Lease_machineId_status_idx";

-- A lease is inserted and ended within seconds, and its end is now heap-only too: half of each
-- page is left for the ended versions (four fifths left too little for a page of fresh leases).
ALTER TABLE "Lease" SET (fillfactor = 50);

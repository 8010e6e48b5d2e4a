-- DropIndex
DROP INDEX "LedgerPosting_accountId_idx";

-- AlterTable
ALTER TABLE "LedgerPosting" ADD COLUMN     "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- Postings written before: their entry's time.
UPDATE "LedgerPosting" p SET "createdAt" = e."createdAt" FROM "LedgerEntry" e WHERE e.id = p."entryId";

-- CreateIndex
CREATE INDEX "LedgerPosting_accountId_createdAt_idx" ON "LedgerPosting"("accountId", "createdAt");

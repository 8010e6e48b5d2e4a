-- CreateIndex
CREATE INDEX "LedgerPosting_entryId_idx" ON "LedgerPosting"("entryId");

-- AlterTable
ALTER TABLE "Machine" ADD COLUMN     "offerKey" TEXT;

-- CreateIndex
CREATE INDEX "Machine_offerKey_idx" ON "Machine"("offerKey");

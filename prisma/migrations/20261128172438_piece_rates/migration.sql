-- AlterTable
ALTER TABLE "Machine" ADD COLUMN     "benchmarkSpeed" DOUBLE PRECISION NOT NULL DEFAULT 1,
ADD COLUMN     "network" TEXT;

-- AlterTable
ALTER TABLE "Job" DROP COLUMN "penaltyHeldMicro",
ADD COLUMN     "maxSpendMicro" BIGINT,
ADD COLUMN     "submitNetwork" TEXT,
ADD COLUMN     "workSamples" JSONB NOT NULL DEFAULT '[]';

-- AlterTable
ALTER TABLE "Lease" ADD COLUMN     "ahead" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "pieceRateMicro" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "pilot" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "Result" DROP COLUMN "implausible",
ADD COLUMN     "failure" TEXT,
ADD COLUMN     "failureConfirmed" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "heldMicro" BIGINT,
ADD COLUMN     "late" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "MarketAlive" (
    "id" TEXT NOT NULL,
    "aliveAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "MarketAlive_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MarketOutage" (
    "id" TEXT NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "MarketOutage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "MarketOutage_endedAt_idx" ON "MarketOutage"("endedAt");

-- A machine registered before speeds were measured was last benchmarked at its speed.
UPDATE "Machine" SET "benchmarkSpeed" = speed;

-- No account below its floor, whatever statement moves it: a debit that would take one there
-- fails its whole statement (db/sql/statement.ts reads it as FloorCrossed). The schema's only check.
ALTER TABLE "LedgerAccount" ADD CONSTRAINT "LedgerAccount_floor" CHECK ("balanceMicro" >= "minBalanceMicro");

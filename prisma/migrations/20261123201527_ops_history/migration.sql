-- CreateEnum
CREATE TYPE "DecisionOutcome" AS ENUM ('admission', 'delay', 'rejection', 'placement', 'move', 'departure');

-- CreateTable
CREATE TABLE "MarketSample" (
    "resolution" INTEGER NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "machinesOpportunistic" DOUBLE PRECISION NOT NULL,
    "machinesDedicated" DOUBLE PRECISION NOT NULL,
    "slotsOpportunistic" DOUBLE PRECISION NOT NULL,
    "slotsDedicated" DOUBLE PRECISION NOT NULL,
    "utilisation" DOUBLE PRECISION NOT NULL,
    "queuedTasks" DOUBLE PRECISION NOT NULL,
    "runningTasks" DOUBLE PRECISION NOT NULL,
    "admissions" INTEGER NOT NULL,
    "delays" INTEGER NOT NULL,
    "rejections" INTEGER NOT NULL,
    "referencePrice" DOUBLE PRECISION,
    "chargedMicro" BIGINT NOT NULL,
    "producerPaidMicro" BIGINT NOT NULL,
    "profitMicro" BIGINT NOT NULL,

    CONSTRAINT "MarketSample_pkey" PRIMARY KEY ("resolution","at")
);

-- CreateTable
CREATE TABLE "MarketDecision" (
    "id" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "outcome" "DecisionOutcome" NOT NULL,
    "jobId" TEXT,
    "machineId" TEXT,
    "userId" TEXT,
    "tasks" INTEGER NOT NULL DEFAULT 0,
    "reasons" JSONB NOT NULL,
    "detail" JSONB,

    CONSTRAINT "MarketDecision_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "MarketDecision_at_idx" ON "MarketDecision"("at");

-- CreateIndex
CREATE INDEX "MarketDecision_jobId_at_idx" ON "MarketDecision"("jobId", "at");

-- CreateIndex
CREATE INDEX "MarketDecision_machineId_at_idx" ON "MarketDecision"("machineId", "at");

-- CreateIndex
CREATE INDEX "MarketDecision_userId_at_idx" ON "MarketDecision"("userId", "at");

-- CreateIndex
CREATE INDEX "MarketDecision_outcome_at_idx" ON "MarketDecision"("outcome", "at");

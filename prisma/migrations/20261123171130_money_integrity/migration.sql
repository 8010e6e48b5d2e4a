-- AlterTable
ALTER TABLE "Machine" ADD COLUMN     "contractPaidMicro" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "contractPaidUntil" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "declaredWorkPerTask" DOUBLE PRECISION,
ADD COLUMN     "penaltyHeldMicro" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "agreedOwners" INTEGER;

-- AlterTable
ALTER TABLE "Result" ADD COLUMN     "implausible" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "paidMicro" BIGINT;

-- AlterTable
ALTER TABLE "LedgerAccount" ADD COLUMN     "minBalanceMicro" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Machine" DROP COLUMN "reputation";

-- CreateTable
CREATE TABLE "Standing" (
    "userId" TEXT NOT NULL,
    "verified" INTEGER NOT NULL DEFAULT 0,
    "disagreements" INTEGER NOT NULL DEFAULT 0,
    "unconfirmedFailures" INTEGER NOT NULL DEFAULT 0,
    "expiredLeases" INTEGER NOT NULL DEFAULT 0,
    "forgeries" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Standing_pkey" PRIMARY KEY ("userId")
);

-- AddForeignKey
ALTER TABLE "Standing" ADD CONSTRAINT "Standing_userId_fkey" FOREIGN KEY ("userId") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

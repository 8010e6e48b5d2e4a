-- The history by Market Manager (issue 47: the history charts can be split by manager). Each
-- manager samples its own market, and the market-wide view adds them up at read (ops/history.ts).
-- AlterTable
ALTER TABLE "MarketSample" DROP CONSTRAINT "MarketSample_pkey",
ADD COLUMN     "manager" TEXT NOT NULL DEFAULT '',
ADD CONSTRAINT "MarketSample_pkey" PRIMARY KEY ("resolution", "manager", "at");

-- CreateIndex
CREATE INDEX "MarketSample_resolution_at_idx" ON "MarketSample"("resolution", "at");

-- Every Market Manager looks, once a stamp, for accounts another manager caught forging since its
-- last look (db/sql/standing-facts.ts recentForgers): a forger's standing is gone at every manager,
-- not only at the one that caught it. Forgers are few, so only their rows are indexed, and every
-- other account's update of its facts costs only this predicate's check. schema.prisma cannot say
-- a partial index, so it is written here and the schema leaves it out.
CREATE INDEX "Standing_forgers_idx" ON "Standing"("updatedAt") WHERE forgeries > 0;

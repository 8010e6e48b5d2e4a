-- The history's sample sums what consumers were charged every 5 s. Summed over every job it grew
-- with the market's history (29.5 ms a sample after five minutes of bench:load with 1,000 machines
-- and 50 consumers, 12,000 jobs). A job's charge is written once, with the time it was settled,
-- so the sampler keeps the sum of the jobs settled long ago and reads only the jobs settled since
-- by this index (ops/sampler.ts CHARGED_SQL). A job's row changes this column once, when it is
-- settled, in the update that changes its status (already indexed), so its other updates stay HOT.
CREATE INDEX "Job_completedAt_idx" ON "Job"("completedAt");

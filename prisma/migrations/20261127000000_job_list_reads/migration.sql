-- A consumer's jobs list and the admin's overview show the 200 newest jobs. By the owner alone the
-- list read every job the consumer ever submitted and sorted them (bench:history, 100,000 past
-- jobs: 168 ms a list), and the overview sorted every job of the market. By the owner and the
-- time it arrived, and by that time alone, each reads its 200 and stops. A job's arrival is
-- written when it is admitted, in the update that changes its status (already indexed), so its
-- other updates stay HOT. The new index serves every read by owner the old one did.
CREATE INDEX "Job_ownerId_submittedAt_idx" ON "Job"("ownerId", "submittedAt");

DROP INDEX "Job_ownerId_idx";

CREATE INDEX "Job_submittedAt_idx" ON "Job"("submittedAt");

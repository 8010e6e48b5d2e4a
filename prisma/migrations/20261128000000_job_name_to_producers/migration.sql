-- A consumer may let the producers who run a job's tasks see its name on their statements (by
-- default they see only its short id). A constant default: no row is rewritten.
ALTER TABLE "Job" ADD COLUMN "nameToProducers" BOOLEAN NOT NULL DEFAULT false;

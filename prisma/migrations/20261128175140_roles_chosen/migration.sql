-- The starting credits go only to accounts that chose the consumer role (issue 45: an account that
-- only produces, its roles left at the defaults when its address was confirmed, was granted them).
-- Accounts from before keep the roles they have as chosen.
ALTER TABLE "user" ADD COLUMN     "rolesChosenAt" TIMESTAMP(3);

UPDATE "user" SET "rolesChosenAt" = "createdAt";

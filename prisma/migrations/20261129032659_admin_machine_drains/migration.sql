-- An admin's move of a busy machine drains it (issue 47): it takes no new work, its leases end,
-- and it is handed to "drainingTo" once it holds none.
-- AlterTable
ALTER TABLE "Machine" ADD COLUMN     "drainingSince" TIMESTAMP(3),
ADD COLUMN     "drainingTo" TEXT;

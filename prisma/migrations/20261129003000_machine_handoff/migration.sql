-- Machines handed from one Market Manager to another while both run (issue 47: a manager above
-- its fair share releases idle machines to one below it). The giver sets the new manager and
-- "handedAt" in one conditional update, and the taker picks the rows up at its next stamp and clears it.
-- AlterTable
ALTER TABLE "Machine" ADD COLUMN     "handedAt" TIMESTAMP(3);

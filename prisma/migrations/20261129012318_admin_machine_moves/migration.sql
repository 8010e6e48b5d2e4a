-- An admin moves machines between Market Managers (issue 47: the subsets change on line). A machine
-- an admin placed is "pinned": the fair-share handoff leaves it with its manager.
-- AlterTable
ALTER TABLE "Machine" ADD COLUMN     "pinnedAt" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "Machine" ADD COLUMN     "follows" BOOLEAN NOT NULL DEFAULT false;

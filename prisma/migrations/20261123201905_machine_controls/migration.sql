-- AlterTable
ALTER TABLE "Machine" ADD COLUMN     "controls" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "localAvailable" BOOLEAN NOT NULL DEFAULT true;

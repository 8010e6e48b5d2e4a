-- CreateEnum
CREATE TYPE "TokenScope" AS ENUM ('produce', 'consume');

-- AlterTable
ALTER TABLE "ApiToken" ADD COLUMN     "scopes" "TokenScope"[] DEFAULT ARRAY['produce']::"TokenScope"[];

-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "taskLimits" JSONB;

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "env" JSONB,
ADD COLUMN     "files" JSONB;

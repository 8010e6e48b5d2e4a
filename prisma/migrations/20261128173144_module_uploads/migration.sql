-- Who sent a module's bytes: a job may name a module by hash only if its owner uploaded those
-- bytes (issue 45: a consumer ran the program of another by its hash alone). The first uploader
-- of each module, the one its row names, keeps the right. Anyone else who sent the same bytes
-- before sends them once more (the SDK, CLI and web app ask first and upload when told no).

-- CreateTable
CREATE TABLE "ModuleUpload" (
    "hash" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ModuleUpload_pkey" PRIMARY KEY ("hash","userId")
);

-- CreateIndex
CREATE INDEX "ModuleUpload_userId_idx" ON "ModuleUpload"("userId");

-- AddForeignKey
ALTER TABLE "ModuleUpload" ADD CONSTRAINT "ModuleUpload_hash_fkey" FOREIGN KEY ("hash") REFERENCES "Module"("hash") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ModuleUpload" ADD CONSTRAINT "ModuleUpload_userId_fkey" FOREIGN KEY ("userId") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

INSERT INTO "ModuleUpload" ("hash", "userId", "createdAt") SELECT "hash", "ownerId", "createdAt" FROM "Module";

import { defineConfig } from "prisma/config";

// Used by the Prisma CLI (`prisma generate`, and `prisma migrate deploy` for those who have
// the native engine). The market itself applies migrations through the WebAssembly engine.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost:5432/cyclemarket" },
});

import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import type { Db } from "../db/client.ts";

export interface AuthOptions {
  db: Db;
  secret: string;
  publicUrl: string;
}

/** Sign-up and sign-in with email and password; sessions live in PostgreSQL through Prisma. */
export function createAuth({ db, secret, publicUrl }: AuthOptions) {
  return betterAuth({
    appName: "Cycle Market",
    baseURL: publicUrl,
    basePath: "/api/auth",
    secret,
    trustedOrigins: [publicUrl, publicUrl.replace("localhost", "127.0.0.1")],
    database: prismaAdapter(db, { provider: "postgresql" }),
    emailAndPassword: { enabled: true, minPasswordLength: 8, autoSignIn: true },
    session: { expiresIn: 60 * 60 * 24 * 14 },
    telemetry: { enabled: false },
    advanced: { database: { generateId: () => crypto.randomUUID() } },
  });
}

export type Auth = ReturnType<typeof createAuth>;

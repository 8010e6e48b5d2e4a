import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import type { Db } from "../db/client.ts";
import type { Mailer } from "./mailer.ts";

export interface AuthOptions {
  db: Db;
  secret: string;
  publicUrl: string;
  mailer: Mailer;
  /** Called once a user has proved they own their address (starting credits are granted then). */
  onVerified: (userId: string) => Promise<void>;
}

/**
 * Sign-up and sign-in with email and password; sessions live in PostgreSQL through Prisma. A new
 * user is sent a verification link at once; they can sign in and look around before they follow
 * it, but the market grants starting credits only to verified addresses (one grant per address).
 */
export function createAuth({ db, secret, publicUrl, mailer, onVerified }: AuthOptions) {
  return betterAuth({
    appName: "Cycle Market",
    baseURL: publicUrl,
    basePath: "/api/auth",
    secret,
    trustedOrigins: [publicUrl, publicUrl.replace("localhost", "127.0.0.1")],
    database: prismaAdapter(db, { provider: "postgresql" }),
    emailAndPassword: { enabled: true, minPasswordLength: 8, autoSignIn: true },
    emailVerification: {
      sendOnSignUp: true,
      autoSignInAfterVerification: true,
      expiresIn: 24 * 3600,
      sendVerificationEmail: async ({ user, url }) => {
        await mailer.send({
          to: user.email,
          subject: "Confirm your email for Cycle Market",
          text: `Follow this link to confirm your address and receive your starting credits:\n\n${url}\n\nThe link is valid for 24 hours.`,
          link: url,
        });
      },
      afterEmailVerification: async (user) => onVerified(user.id),
    },
    session: { expiresIn: 60 * 60 * 24 * 14 },
    telemetry: { enabled: false },
    advanced: { database: { generateId: () => crypto.randomUUID() } },
  });
}

export type Auth = ReturnType<typeof createAuth>;

import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import type { Db } from "../db/client.ts";
import type { Mailer } from "./mailer.ts";
import type { AuthRule } from "./auth-limits.ts";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "./password-policy.ts";
import { releasingStorages } from "./context-storage.ts";
import { isMarketAccount } from "./market-accounts.ts";

export interface AuthOptions {
  db: Db;
  secret: string;
  publicUrl: string;
  mailer: Mailer;
  /** Called once a user has proved they own their address (starting credits are granted then). */
  onVerified: (userId: string) => Promise<void>;
  /** The limiter's rules per route (auth-limits.ts) and the one header it reads the client's address from. */
  rateLimit: { rules: Record<string, AuthRule | false>; defaultMax: number; addressHeader: string };
}

/**
 * Sign-up and sign-in with email and password; sessions live in PostgreSQL through Prisma. A new
 * user is sent a verification link at once; they can sign in and look around before they follow
 * it, but the market grants starting credits only to verified addresses (one grant per address).
 */
export function createAuth({ db, secret, publicUrl, mailer, onVerified, rateLimit }: AuthOptions) {
  // Its call contexts are kept only while one of its calls runs (context-storage.ts).
  return releasingStorages(betterAuth({
    appName: "Cycle Market",
    baseURL: publicUrl,
    basePath: "/api/auth",
    secret,
    trustedOrigins: [publicUrl, publicUrl.replace("localhost", "127.0.0.1")],
    database: prismaAdapter(db, { provider: "postgresql" }),
    // The full policy (variety, common passwords, the address) is checked at the door (http/auth-body.ts).
    emailAndPassword: { enabled: true, minPasswordLength: PASSWORD_MIN_LENGTH, maxPasswordLength: PASSWORD_MAX_LENGTH, autoSignIn: true },
    // Counters in PostgreSQL, so guessing a password gains nothing from a restart.
    rateLimit: {
      enabled: true,
      storage: "database",
      window: 60,
      max: rateLimit.defaultMax,
      customRules: Object.fromEntries(Object.entries(rateLimit.rules).map(([path, rule]) => [path, rule && { window: rule.window, max: rule.max }])),
    },
    emailVerification: {
      sendOnSignUp: true,
      autoSignInAfterVerification: true,
      expiresIn: 24 * 3600,
      sendVerificationEmail: async ({ user, url }) => {
        if (isMarketAccount(user.email)) return;
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
    advanced: {
      database: { generateId: () => crypto.randomUUID() },
      // Only the HTTP layer sets this header, from the socket or a trusted proxy (http/auth-route.ts).
      ipAddress: { ipAddressHeaders: [rateLimit.addressHeader] },
    },
  }));
}

export type Auth = ReturnType<typeof createAuth>;

import type { LimitName } from "@cyclemarket/costbenefit";
import type { Config } from "../config.ts";

/** A rule of the auth library's limiter, per client address, with the name a refusal gives it. */
export interface AuthRule {
  limit: LimitName;
  window: number;
  max: number;
}

/**
 * The auth routes' limits per client address, in one place: the limiter is configured from these
 * and a 429 names the one that applied. Reading the session is not limited (every page does it).
 */
export function authRules(cfg: Config): Record<string, AuthRule | false> {
  return {
    "/get-session": false,
    "/sign-in/*": { limit: "sign-ins-per-minute", window: 60, max: cfg.SIGNINS_PER_MINUTE },
    "/sign-up/*": { limit: "sign-ups-per-minute", window: 60, max: cfg.SIGNINS_PER_MINUTE },
    "/change-password": { limit: "password-changes-per-minute", window: 60, max: cfg.SIGNINS_PER_MINUTE },
    "/send-verification-email": { limit: "verification-emails-per-minute", window: 60, max: 3 },
    "/request-password-reset": { limit: "password-resets-per-minute", window: 60, max: 3 },
  };
}

/** The rule a route falls under: its own, or the default for every other auth request. */
export function authRuleFor(cfg: Config, route: string): AuthRule {
  for (const [pattern, rule] of Object.entries(authRules(cfg))) {
    const matches = pattern.endsWith("/*") ? route.startsWith(pattern.slice(0, -1)) : route === pattern;
    if (matches && rule) return rule;
  }
  return { limit: "auth-requests-per-minute", window: 60, max: cfg.AUTH_REQUESTS_PER_MINUTE };
}

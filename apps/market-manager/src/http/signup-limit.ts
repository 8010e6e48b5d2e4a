import type { MarketReasonOf } from "@cyclemarket/costbenefit";
import { isIP } from "node:net";

// Sign-ups are rate-limited per client address (client-address.ts) and per network (the
// address's /24, or /48 for IPv6), so one host cannot open accounts by the dozen. A fixed window per key, in memory: the
// limit guards one Market Manager process, and a restart forgives.

export interface SignupLimits {
  perAddress: number;
  perNetwork: number;
  windowMs: number;
}

export function networkOf(address: string): string {
  if (isIP(address) === 4) return address.split(".").slice(0, 3).join(".") + ".0/24";
  if (isIP(address) === 6) return address.split(":").slice(0, 3).join(":") + "::/48";
  return address;
}

export function signupLimiter(limits: SignupLimits, now: () => number) {
  const windows = new Map<string, { start: number; count: number }>();
  const hit = (key: string, max: number): boolean => {
    const t = now();
    const w = windows.get(key);
    if (!w || t - w.start >= limits.windowMs) {
      windows.set(key, { start: t, count: 1 });
      return true;
    }
    if (w.count >= max) return false;
    w.count += 1;
    return true;
  };
  return {
    /** Null when the sign-up may go ahead, else the refusal to send. */
    check(address: string): MarketReasonOf<"too-many-signups"> | null {
      const network = networkOf(address);
      const scope = !hit(`a:${address}`, limits.perAddress) ? "address" : !hit(`n:${network}`, limits.perNetwork) ? "network" : null;
      if (!scope) return null;
      const w = windows.get(scope === "address" ? `a:${address}` : `n:${network}`)!;
      // Old windows are dropped now and then so the map stays small.
      if (windows.size > 10_000) for (const [k, v] of windows) if (now() - v.start >= limits.windowMs) windows.delete(k);
      return {
        code: "too-many-signups",
        scope,
        limit: scope === "address" ? limits.perAddress : limits.perNetwork,
        windowMinutes: limits.windowMs / 60_000,
        retryAfterSeconds: Math.ceil((w.start + limits.windowMs - now()) / 1000),
      };
    },
  };
}

// A producer account's standing (docs/DESIGN.md "Standing"): computed only from facts the market
// verified itself. It rises with results accepted in agreement with machines of *other* accounts
// that already had standing, needs a confirmed address and some age, and falls on disagreement,
// failures another owner's run contradicted and leases left to expire. An account caught forging
// has none, for good: accounts cost an attacker nothing, so a burnt one is simply left behind.
import { z } from "zod";

const count = z.number().int().min(0);

/** What the market recorded about one producer account. */
export const StandingFacts = z.object({
  /**
   * An account the market trusts without checks: its own (its admin, the launcher's local
   * worker), the root every other standing grows from, or every account of a closed market.
   */
  trusted: z.boolean().default(false),
  emailConfirmed: z.boolean(),
  /** Seconds since the account was created, on the market's clock. */
  ageSeconds: z.number().min(0),
  /** Results accepted in agreement with a machine of another account that had standing. */
  verified: count,
  /** Results whose output disagreed with the one accepted. */
  disagreements: count,
  /** Failed runs that a run of another owner contradicted (the program did not fail there). */
  unconfirmedFailures: count,
  /** Leases its machines let expire without a report. */
  expiredLeases: count,
  /** Times its machines were caught forging: disagreeing with an output two accounts with standing agreed on. */
  forgeries: count,
});
export type StandingFacts = z.infer<typeof StandingFacts>;

/** The documented rules; the defaults are the market's. */
export const StandingRules = z.object({
  /** Net verified results an account needs for standing (each disagreement, failure or expiry takes some back). */
  verifiedForStanding: z.number().int().min(1).default(20),
  minAgeSeconds: z.number().min(0).default(86_400),
  disagreementWeight: z.number().min(0).default(5),
  failureWeight: z.number().min(0).default(1),
  expiredLeaseWeight: z.number().min(0).default(0.5),
  /**
   * The fraction of an account's single-copy results run again elsewhere is min(1, scale / verified),
   * never below the floor: every result until `scale` verified ones, then fewer as checks pass.
   */
  spotCheckScale: z.number().min(0).default(250),
  spotCheckFloor: z.number().min(0).max(1).default(0.05),
});
export type StandingRules = z.infer<typeof StandingRules>;
export type StandingRulesInput = z.input<typeof StandingRules>;

export const DEFAULT_STANDING_RULES: StandingRules = StandingRules.parse({});

/** What would raise an account's standing, as data (words are the UI's). */
export type StandingStep =
  | { code: "confirm-email" }
  | { code: "account-age"; ageSeconds: number; minAgeSeconds: number }
  | { code: "verified-results"; net: number; need: number }
  | { code: "fewer-spot-checks"; spotCheck: number; verified: number; floorAt: number };

export interface Standing {
  /** Whether its machines' results count towards a quorum and run without an added copy. */
  has: boolean;
  /** In [0, 1]: the way to standing (1 once it is there); 0 for an account caught forging. */
  score: number;
  /** Verified results net of what disagreements, failures and expiries took back. */
  net: number;
  /** The fraction of its single-copy results spot-checked (1 without standing: each gets an added copy). */
  spotCheck: number;
  /** Why it has none, or how its checks get fewer; empty for the market's accounts and forgers. */
  steps: StandingStep[];
  forged: boolean;
}

/** The standing the facts give, by the rules (pure: the same facts give the same answer). */
export function standingOf(facts: StandingFacts, rules: StandingRules = DEFAULT_STANDING_RULES): Standing {
  if (facts.trusted) return { has: true, score: 1, net: facts.verified, spotCheck: 0, steps: [], forged: false };
  const net =
    facts.verified - rules.disagreementWeight * facts.disagreements - rules.failureWeight * facts.unconfirmedFailures - rules.expiredLeaseWeight * facts.expiredLeases;
  if (facts.forgeries > 0) return { has: false, score: 0, net, spotCheck: 1, steps: [], forged: true };
  const steps: StandingStep[] = [];
  if (!facts.emailConfirmed) steps.push({ code: "confirm-email" });
  if (facts.ageSeconds < rules.minAgeSeconds) steps.push({ code: "account-age", ageSeconds: facts.ageSeconds, minAgeSeconds: rules.minAgeSeconds });
  if (net < rules.verifiedForStanding) steps.push({ code: "verified-results", net, need: rules.verifiedForStanding });
  // Each condition met is a third of the way; verified results count in proportion.
  const score = ((facts.emailConfirmed ? 1 : 0) + Math.min(1, facts.ageSeconds / Math.max(1, rules.minAgeSeconds)) + Math.max(0, Math.min(1, net / rules.verifiedForStanding))) / 3;
  if (steps.length) return { has: false, score: Math.min(score, 0.99), net, spotCheck: 1, steps, forged: false };
  const spotCheck = spotCheckFraction(net, rules);
  const floorAt = rules.spotCheckFloor > 0 ? rules.spotCheckScale / rules.spotCheckFloor : Infinity;
  if (spotCheck > rules.spotCheckFloor) steps.push({ code: "fewer-spot-checks", spotCheck, verified: net, floorAt });
  return { has: true, score: 1, net, spotCheck, steps, forged: false };
}

/** The fraction of single-copy results of an account with standing run again elsewhere. */
export function spotCheckFraction(verified: number, rules: StandingRules = DEFAULT_STANDING_RULES): number {
  if (verified <= 0) return 1;
  return Math.min(1, Math.max(rules.spotCheckFloor, rules.spotCheckScale / verified));
}

/**
 * Whether this task's single-copy result is spot-checked: a deterministic draw from the market's
 * secret seed and the task's id, so a producer cannot tell which of its runs are checked, and a
 * replay decides the same.
 */
export function spotChecked(seed: string, taskId: string, fraction: number): boolean {
  if (fraction <= 0) return false;
  if (fraction >= 1) return true;
  return uniformOf(`${seed}:${taskId}`) < fraction;
}

/**
 * The machine that runs a copy verification added (a check, a spot check, a tie-break): of the
 * candidates that may run it (`eligible`, asked only of those that would rank first), the one the
 * market's secret seed ranks first for this copy (a highest-random-weight draw). No account can
 * arrange to be the one that checks a result by asking first or asking least, and a machine
 * joining or leaving moves the copy only when it ranks first itself. Null when there is none.
 */
export function drawnMachine(seed: string, copyId: string, candidates: Iterable<string>, eligible: (id: string) => boolean = () => true): string | null {
  const prefix = mix(`${seed}:draw:${copyId}:`, FNV_A, FNV_B);
  let best: string | null = null;
  let rank = -1;
  for (const id of candidates) {
    const [a, b] = mix(id, prefix[0], prefix[1]);
    const r = finish(a, b);
    if ((r > rank || (r === rank && best !== null && id < best)) && eligible(id)) {
      best = id;
      rank = r;
    }
  }
  return best;
}

const FNV_A = 0x811c9dc5;
const FNV_B = 0x01000193 ^ 0x5bd1e995;

/** Two rounds of FNV-1a over `s`, from the state (a, b): a prefix's state is computed once. */
function mix(s: string, a: number, b: number): [number, number] {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  return [a, b];
}

function finish(a: number, b: number): number {
  const x = Math.imul(a ^ (b >>> 7), 0x85ebca6b) ^ Math.imul(b ^ (a >>> 11), 0xc2b2ae35);
  return ((x ^ (x >>> 16)) >>> 0) / 4294967296;
}

/** A uniform number in [0, 1) from a string: two rounds of FNV-1a, mixed (the engine's rng is for streams). */
function uniformOf(s: string): number {
  const [a, b] = mix(s, FNV_A, FNV_B);
  return finish(a, b);
}

/** Mail providers anyone can open addresses at: a confirmed address there says nothing of who holds it. */
export const COMMON_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com", "yahoo.com", "ymail.com", "icloud.com", "me.com", "mac.com",
  "aol.com", "proton.me", "protonmail.com", "pm.me", "gmx.com", "gmx.net", "gmx.de", "web.de", "mail.com", "mail.ru", "yandex.ru", "yandex.com",
  "zoho.com", "fastmail.com", "tutanota.com", "tuta.io", "qq.com", "163.com", "126.com", "naver.com", "hey.com", "inbox.com",
]);

/**
 * Who a vote is from, for a quorum: the confirmed address's domain when it is an organisation's
 * (one vote per domain, however many accounts it opens), else the account itself.
 */
export function verifierOf(account: { id: string; email: string; emailConfirmed: boolean }): string {
  const at = account.email.lastIndexOf("@");
  const domain = at >= 0 ? account.email.slice(at + 1).toLowerCase() : "";
  return account.emailConfirmed && domain && !COMMON_MAIL_DOMAINS.has(domain) ? `domain:${domain}` : `account:${account.id}`;
}

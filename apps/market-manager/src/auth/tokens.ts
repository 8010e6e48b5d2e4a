import { hash, randomBytes } from "node:crypto";
import type { Db } from "../db/client.ts";
import type { TokenScope } from "../db/generated/enums.ts";
import { HeldAnswers } from "./held-answers.ts";

// API tokens for Node workers (scope `produce`) and for the consumer's SDK and CLI (scope
// `consume`): a random secret shown once, stored only as its SHA-256.
const PREFIX = "cmk_";

export function hashToken(token: string): string {
  // One call, no hash object: every API call of every worker hashes its token.
  return hash("sha256", token, "hex");
}

export async function createApiToken(db: Db, userId: string, name: string, scopes: TokenScope[] = ["produce"]) {
  const token = PREFIX + randomBytes(24).toString("base64url");
  const row = await db.apiToken.create({
    data: { userId, name, tokenHash: hashToken(token), prefix: token.slice(0, PREFIX.length + 6), scopes: [...new Set(scopes)] },
  });
  return { id: row.id, name: row.name, prefix: row.prefix, scopes: row.scopes, createdAt: row.createdAt, token };
}

/** The user behind a bearer token and what the token may do, or null when it is unknown or revoked. */
export async function userForToken(db: Db, token: string) {
  if (!token.startsWith(PREFIX)) return null;
  const row = await db.apiToken.findUnique({ where: { tokenHash: hashToken(token) }, include: { user: true } });
  if (!row || row.revokedAt) return null;
  return { user: row.user, tokenId: row.id, scopes: row.scopes };
}

export type TokenHolder = NonNullable<Awaited<ReturnType<typeof userForToken>>>;

/** How long a token's holder is believed without asking the database again (roles, a revocation by another process). */
const TOKEN_TTL_MS = 10_000;
/** Use of tokens is written this often, all tokens in one statement. */
const LAST_USED_FLUSH_MS = 30_000;

/**
 * Every worker call carries its token: it is looked up in PostgreSQL once and then answered from
 * memory (held-answers.ts), so thousands of machines calling every few seconds cost no query
 * each. A revocation or a change of roles here forgets the entry at once; anything changed
 * elsewhere is seen within TOKEN_TTL_MS. When a token was last used is recorded in batches, not per call.
 */
export class TokenCache {
  private held: HeldAnswers<TokenHolder>;
  private used = new Set<string>();
  private timer: ReturnType<typeof setInterval>;

  constructor(
    private db: Db,
    private now: () => number = Date.now,
  ) {
    this.held = new HeldAnswers<TokenHolder>(TOKEN_TTL_MS, now);
    this.timer = setInterval(() => void this.flush(), LAST_USED_FLUSH_MS);
    this.timer.unref();
  }

  async lookup(token: string): Promise<TokenHolder | null> {
    if (!token.startsWith(PREFIX)) return null;
    const holder = await this.held.lookup(hashToken(token), () => userForToken(this.db, token));
    if (holder) this.used.add(holder.tokenId);
    return holder;
  }

  /** A token was revoked, or its user's roles changed: the next call asks the database. */
  forget(match: { tokenId?: string; userId?: string }) {
    this.held.forget((holder) => holder.tokenId === match.tokenId || holder.user.id === match.userId);
  }

  /** Records when the tokens used since the last flush were used (best effort: it must not fail a request). */
  async flush() {
    if (!this.used.size) return;
    const ids = [...this.used];
    this.used.clear();
    await this.db.apiToken.updateMany({ where: { id: { in: ids } }, data: { lastUsedAt: new Date(this.now()) } }).catch(() => {});
  }

  async close() {
    clearInterval(this.timer);
    await this.flush();
  }
}

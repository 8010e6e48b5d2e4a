import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../db/client.ts";
import type { TokenScope } from "../db/generated/enums.ts";

// API tokens for Node workers (scope `produce`) and for the consumer's SDK and CLI (scope
// `consume`): a random secret shown once, stored only as its SHA-256.
const PREFIX = "cmk_";

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
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
  // Recording use is best effort; it must not slow or fail the request.
  void db.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } }).catch(() => {});
  return { user: row.user, tokenId: row.id, scopes: row.scopes };
}

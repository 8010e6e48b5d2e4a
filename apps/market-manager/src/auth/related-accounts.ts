// When two accounts are one party as far as the market can tell: the same account, accounts whose
// confirmed email addresses share a domain that is not a common mail provider, or a machine that
// registered from the network a job was submitted from. Lateness relief never comes from such a
// producer (a consumer cannot pay themselves from the market), and a replica quorum counts one
// such party once (45: standing.ts).
import type { Tx } from "../ledger/ledger.ts";
import type { Db } from "../db/client.ts";

/** Domains many unrelated people share: a shared one says nothing about who an account belongs to. */
export const COMMON_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com", "yahoo.com", "ymail.com",
  "icloud.com", "me.com", "mac.com", "aol.com", "proton.me", "protonmail.com", "pm.me", "gmx.com", "gmx.net", "gmx.de",
  "web.de", "mail.com", "zoho.com", "yandex.com", "yandex.ru", "mail.ru", "qq.com", "163.com", "126.com", "fastmail.com",
  "hey.com", "tutanota.com", "example.com", "example.org", "example.net", "test",
]);

/** The domain of a confirmed address that identifies its owner's organisation, or null. */
export function distinctiveDomain(email: string, verified: boolean): string | null {
  if (!verified) return null;
  const at = email.lastIndexOf("@");
  if (at < 0) return null;
  const domain = email.slice(at + 1).trim().toLowerCase();
  return domain && !COMMON_MAIL_DOMAINS.has(domain) ? domain : null;
}

/** Which of `producers` (by owner, with the network their machine registered from) are tied to the consumer. */
export async function relatedProducers(
  db: Tx | Db,
  consumer: { consumerId: string; network: string | null },
  producers: readonly { ownerId: string; network: string | null }[],
): Promise<Set<string>> {
  const related = new Set<string>();
  for (const p of producers) {
    if (p.ownerId === consumer.consumerId || (consumer.network !== null && p.network === consumer.network)) related.add(p.ownerId);
  }
  const others = [...new Set(producers.map((p) => p.ownerId))].filter((id) => !related.has(id));
  if (!others.length) return related;
  const users = await db.user.findMany({ where: { id: { in: [consumer.consumerId, ...others] } }, select: { id: true, email: true, emailVerified: true } });
  const domain = new Map(users.map((u) => [u.id, distinctiveDomain(u.email, u.emailVerified)]));
  const mine = domain.get(consumer.consumerId) ?? null;
  if (mine) for (const id of others) if (domain.get(id) === mine) related.add(id);
  return related;
}

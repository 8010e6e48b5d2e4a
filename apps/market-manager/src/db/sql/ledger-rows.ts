// The ledger's rows of any list of entries (ledger/entries.ts) written by one statement, or as
// part of a bigger one (a group of reports, an admission): the entries, their postings, and each
// account moved once by the sum of its postings, made on first use. An account driven below its
// floor fails the whole statement (the check constraint LedgerAccount_floor, read as FloorCrossed);
// an entry whose unique key exists already writes nothing of the list.
import { accountKey, MARKET_OWNER, type Entry } from "../../ledger/entries.ts";
import { toJson } from "../client.ts";
import { rowId } from "../row-id.ts";
import { statement, type Placeholders } from "./statement.ts";

export interface LedgerParams {
  entryIds: string[];
  entryKinds: string[];
  entryKeys: string[];
  entryJobs: (string | null)[];
  entryTasks: (string | null)[];
  entryMemos: string[];
  postingIds: string[];
  postingEntries: string[];
  postingAccounts: string[];
  postingAmounts: string[];
  accountKeys: string[];
  accountKinds: string[];
  accountUsers: (string | null)[];
  accountJobs: (string | null)[];
  accountDeltas: string[];
}

/** The parameters of `entries`' rows. */
export function ledgerParams(entries: readonly Entry[]): LedgerParams {
  const p: LedgerParams = {
    entryIds: [],
    entryKinds: [],
    entryKeys: [],
    entryJobs: [],
    entryTasks: [],
    entryMemos: [],
    postingIds: [],
    postingEntries: [],
    postingAccounts: [],
    postingAmounts: [],
    accountKeys: [],
    accountKinds: [],
    accountUsers: [],
    accountJobs: [],
    accountDeltas: [],
  };
  const deltas = new Map<string, { kind: string; user: string | null; job: string | null; delta: bigint }>();
  for (const e of entries) {
    p.entryIds.push(e.id);
    p.entryKinds.push(e.kind);
    p.entryKeys.push(e.uniqueKey);
    p.entryJobs.push(e.jobId);
    p.entryTasks.push(e.taskId);
    p.entryMemos.push(JSON.stringify(toJson(e.memo ?? {})));
    for (const posting of e.postings) {
      const key = accountKey(posting.account);
      // Time-ordered, as every row id the market writes by the thousand (row-id.ts): a random one lands on a random leaf of the postings' key.
      p.postingIds.push(rowId());
      p.postingEntries.push(e.id);
      p.postingAccounts.push(key);
      p.postingAmounts.push(String(posting.amount));
      const a = posting.account;
      const d = deltas.get(key) ?? { kind: a.kind, user: a.kind === "escrow" ? null : a.kind === "market" ? MARKET_OWNER : a.userId, job: a.kind === "escrow" ? a.jobId : null, delta: 0n };
      d.delta += posting.amount;
      deltas.set(key, d);
    }
  }
  for (const [key, d] of deltas) {
    p.accountKeys.push(key);
    p.accountKinds.push(d.kind);
    p.accountUsers.push(d.user);
    p.accountJobs.push(d.job);
    p.accountDeltas.push(String(d.delta));
  }
  return p;
}

/**
 * The CTEs that write the rows, named `ledger_entries`, `ledger_accounts` (id, key, balance after)
 * and `ledger_postings`. Accounts move only when every entry of the list was new.
 *
 * `existing`: what an entry whose unique key is taken does. "skipped" (the default): it is not
 * written, and `ledger_all_new` says so, for a caller to whom an entry posted before is an answer.
 * "fatal": the unique constraint fails the whole statement, for a statement that refuses such a
 * list anyway; its entries are then plain inserts, without the extra log record and index probe
 * a skippable (speculative) insert costs an entry.
 *
 * Accounts are moved, and so locked, in the order of their keys, whatever order the entries name
 * them in: two statements moving the same accounts (several Market Managers' groups paying the
 * same producers and the market) wait for each other, never deadlock.
 */
export const ledgerCtes = (p: Placeholders<LedgerParams>, existing: "skipped" | "fatal" = "skipped") => `
ledger_entries AS (
  INSERT INTO "LedgerEntry" (id, kind, "uniqueKey", "jobId", "taskId", memo)
  SELECT unnest(${p.entryIds}::uuid[]), unnest(${p.entryKinds}::text[]), unnest(${p.entryKeys}::text[]), unnest(${p.entryJobs}::text[]),
    unnest(${p.entryTasks}::text[]), unnest(${p.entryMemos}::jsonb[])
  ${existing === "skipped" ? `ON CONFLICT ("uniqueKey") DO NOTHING` : ""}
  RETURNING id
), ledger_moves AS (
  SELECT unnest(${p.accountKeys}::text[]) AS key, unnest(${p.accountKinds}::text[]) AS kind, unnest(${p.accountUsers}::text[]) AS owner,
    unnest(${p.accountJobs}::text[]) AS job, unnest(${p.accountDeltas}::bigint[]) AS delta
), ledger_all_new AS (
  SELECT (SELECT count(*) FROM ledger_entries) = cardinality(${p.entryIds}::uuid[]) AS ok
), ledger_users AS (
  -- A row proposed for insertion meets the floor's check before its conflict is found, so it
  -- proposes no debit: a debit of an account that does not exist yet shows as an inserted row.
  INSERT INTO "LedgerAccount" (id, kind, "userId", "balanceMicro")
  SELECT gen_random_uuid(), m.kind::"AccountKind", m.owner, GREATEST(m.delta, 0) FROM ledger_moves m, ledger_all_new n WHERE m.job IS NULL AND n.ok
  ORDER BY m.key
  ON CONFLICT (kind, "userId") DO UPDATE SET "balanceMicro" = "LedgerAccount"."balanceMicro" + (SELECT delta FROM ledger_moves WHERE key = EXCLUDED.kind::text || ':' || EXCLUDED."userId")
  RETURNING id, kind::text || ':' || "userId" AS key, "balanceMicro" AS balance, xmax = 0 AS inserted
), ledger_escrows AS (
  INSERT INTO "LedgerAccount" (id, kind, "jobId", "balanceMicro")
  SELECT gen_random_uuid(), 'escrow'::"AccountKind", m.job, GREATEST(m.delta, 0) FROM ledger_moves m, ledger_all_new n WHERE m.job IS NOT NULL AND n.ok
  ORDER BY m.key
  ON CONFLICT ("jobId") DO UPDATE SET "balanceMicro" = "LedgerAccount"."balanceMicro" + (SELECT delta FROM ledger_moves WHERE key = 'escrow:' || EXCLUDED."jobId")
  RETURNING id, 'escrow:' || "jobId" AS key, "balanceMicro" AS balance, xmax = 0 AS inserted
), ledger_accounts AS (
  SELECT * FROM ledger_users UNION ALL SELECT * FROM ledger_escrows
), ledger_postings AS (
  INSERT INTO "LedgerPosting" (id, "entryId", "accountId", "amountMicro")
  SELECT p.id, p.entry, a.id, p.amount
  FROM (SELECT unnest(${p.postingIds}::uuid[]) AS id, unnest(${p.postingEntries}::uuid[]) AS entry, unnest(${p.postingAccounts}::text[]) AS account,
    unnest(${p.postingAmounts}::bigint[]) AS amount) p
  JOIN ledger_accounts a ON a.key = p.account
  RETURNING 1
)`;

/**
 * A select-list value that refuses the statement when a posting found no account (every account
 * a posting names is in the list's moves, so this means the list itself was malformed).
 */
export const ledgerChecks = (p: Placeholders<LedgerParams>) =>
  `CASE WHEN EXISTS (SELECT 1 FROM ledger_accounts a JOIN ledger_moves m ON m.key = a.key WHERE a.inserted AND m.delta < 0)
      THEN market_refuse('account-floor')
    WHEN (SELECT ok FROM ledger_all_new) AND (SELECT count(*) FROM ledger_postings) <> cardinality(${p.postingIds}::uuid[])
      THEN market_refuse('ledger-posting-without-account') ELSE 0 END`;

/**
 * Entries on their own: all of them, or none when one was posted already (`posted` 0). Within a
 * transaction, the ledger's one way to write (ledger.ts `post`).
 */
export const applyLedger = statement<LedgerParams, { posted: number }>(
  "apply-ledger",
  (p) => `
WITH ${ledgerCtes(p)}
SELECT CASE WHEN (SELECT ok FROM ledger_all_new) THEN (SELECT count(*) FROM ledger_entries)::int
    WHEN (SELECT count(*) FROM ledger_entries) > 0 THEN market_refuse('ledger-entry-exists')
    ELSE 0 END AS posted,
  ${ledgerChecks(p)} AS checked`,
);

/**
 * What a user's or the market's account may still spend (its balance above its floor, micro-credits
 * as text), its row locked until the transaction ends: a write that moves an amount read here
 * (all of a producer's earnings, a grant within the market's reserve) moves what is there, whatever
 * another Market Manager writes meanwhile. No row: the account was never made.
 */
export const lockedSpendable = statement<{ kind: string; userId: string }, { spendable: string }>(
  "locked-spendable",
  (p) => `
SELECT greatest("balanceMicro" - "minBalanceMicro", 0)::text AS spendable FROM "LedgerAccount"
WHERE kind = ${p.kind}::"AccountKind" AND "userId" = ${p.userId}::text FOR UPDATE`,
);

import type { JsonValue } from "../generated/internal/prismaNamespace.ts";
import { statement, type Placeholders } from "./statement.ts";

interface UserParams {
  userId: string;
}

/** The user's consumer and producer accounts. */
const accounts = (p: Placeholders<UserParams>) => `accounts AS (
  SELECT id, kind::text AS kind, "balanceMicro" FROM "LedgerAccount"
  WHERE "userId" = ${p.userId} AND kind IN ('consumer'::"AccountKind", 'producer'::"AccountKind")
)`;
const balances = (p: Placeholders<UserParams>) => `
  (SELECT coalesce(json_object_agg(kind, "balanceMicro"::text), '{}'::json) FROM accounts) AS balances,
  -- Only admitted and running jobs hold escrow; every other job's escrow account is empty.
  (SELECT coalesce(sum(x."balanceMicro"), 0)::text FROM "Job" j JOIN "LedgerAccount" x ON x."jobId" = j.id
     WHERE j."ownerId" = ${p.userId} AND j.status IN ('admitted'::"JobStatus", 'running'::"JobStatus")) AS escrow`;

/** A user's balances (micro-credits as decimal text) and what their running jobs hold in escrow. */
export interface BalancesRow {
  balances: Partial<Record<"consumer" | "producer", string>>;
  escrow: string;
}

export interface StatementRow extends BalancesRow {
  lines: { at: number; account: "consumer" | "producer"; kind: string; jobId: string | null; jobName: string | null; ownJob: boolean; amount: string; memo: JsonValue }[];
}

/**
 * A user's statement in one statement, on the pages' readers and prepared once per connection:
 * their accounts' balances, what their running jobs hold in escrow, and the newest `lines`. Each
 * account's newest postings are read by its own index (accountId, createdAt) and the newest of
 * both kept: ordered by their entries' time, the read sorted every posting the user ever had (a
 * producer holds one per paid run). A line names its job for the job's owner, who may open it
 * (`ownJob`), and for a producer paid for its tasks only when the owner let producers see the
 * name (`nameToProducers`); everyone sees the job's id.
 */
export const userStatement = statement<UserParams & { lines: number }, StatementRow>(
  "ledger-statement",
  (p) => `
WITH ${accounts(p)}, lines AS (
  SELECT p.id, p."createdAt", p."amountMicro", p."entryId", a.kind AS account
  FROM accounts a CROSS JOIN LATERAL (
    SELECT * FROM "LedgerPosting" p WHERE p."accountId" = a.id ORDER BY p."createdAt" DESC, p.id DESC LIMIT ${p.lines}
  ) p
  ORDER BY p."createdAt" DESC, p.id DESC LIMIT ${p.lines}
)
SELECT ${balances(p)},
  (SELECT coalesce(json_agg(json_build_object('at', (extract(epoch FROM e."createdAt") * 1000)::float8, 'account', l.account, 'kind', e.kind,
      'jobId', e."jobId", 'jobName', CASE WHEN j."ownerId" = ${p.userId} OR j."nameToProducers" THEN j.name END, 'ownJob', coalesce(j."ownerId" = ${p.userId}, false),
      'amount', l."amountMicro"::text, 'memo', e.memo) ORDER BY l."createdAt" DESC, l.id DESC), '[]'::json)
     FROM lines l JOIN "LedgerEntry" e ON e.id = l."entryId" LEFT JOIN "Job" j ON j.id = e."jobId") AS lines`,
);

/** The balances alone: what every page's header polls (ledger.balance), every few seconds. */
export const userBalances = statement<UserParams, BalancesRow>("ledger-balance", (p) => `WITH ${accounts(p)} SELECT ${balances(p)}`);

// One writer per ledger rule. Each function here turns one of the engine's money answers into the
// one balanced entry that records it: its kind, its unique key (what makes "paid once" and
// "settled once" database constraints) and its postings. Nothing else in the market decides which
// accounts a movement touches: a transaction posts an entry with `post` (ledger.ts), a group of
// reports or an admission sends its entries in one statement (db/sql/ledger-rows.ts); both write
// exactly the rows these functions return.
import { rowId } from "../db/row-id.ts";

export type AccountRef =
  | { kind: "market" }
  | { kind: "consumer"; userId: string }
  | { kind: "producer"; userId: string }
  | { kind: "escrow"; jobId: string };

export interface Posting {
  account: AccountRef;
  /** Micro-credits; positive credits the account, negative debits it. */
  amount: bigint;
  /** Record the posting even when it is zero, so the account's statement shows the event. */
  keep?: boolean;
}

export type EntryKind = "grant" | "admin-grant" | "earnings-transfer" | "escrow" | "payment" | "settlement" | "contract" | "forfeit";

export interface Entry {
  id: string;
  kind: EntryKind;
  uniqueKey: string;
  jobId: string | null;
  taskId: string | null;
  memo: unknown;
  postings: Posting[];
}

export const MARKET_OWNER = "market";

/** The account's key in one statement's rows: its kind and owner (a user, the market, a job). */
export const accountKey = (a: AccountRef) => (a.kind === "escrow" ? `escrow:${a.jobId}` : `${a.kind}:${a.kind === "market" ? MARKET_OWNER : a.userId}`);

function entry(kind: EntryKind, uniqueKey: string, postings: Posting[], memo: unknown, jobId: string | null = null, taskId: string | null = null, id = rowId()): Entry {
  const kept = postings.filter((p) => p.amount !== 0n || p.keep);
  const sum = kept.reduce((s, p) => s + p.amount, 0n);
  if (sum !== 0n) throw new Error(`unbalanced ledger entry ${uniqueKey}: postings sum to ${sum}`);
  return { id, kind, uniqueKey, jobId, taskId, memo, postings: kept };
}

export const grantKey = (userId: string) => `grant:${userId}`;

/** New consumers start with credits from the market's account, so they can try it at once. */
export function startingGrant(userId: string, amount: bigint): Entry {
  return entry(
    "grant",
    grantKey(userId),
    [
      { account: { kind: "market" }, amount: -amount },
      { account: { kind: "consumer", userId }, amount },
    ],
    { reason: "starting credits" },
  );
}

export const adminGrantKey = (grantId: string) => `admin-grant:${grantId}`;

/** An admin grants credits to a consumer from the market's account, naming themselves and why. */
export function adminGrant(g: { grantId: string; userId: string; amount: bigint; admin: { id: string; name: string }; reason: string }): Entry {
  return entry(
    "admin-grant",
    adminGrantKey(g.grantId),
    [
      { account: { kind: "market" }, amount: -g.amount },
      { account: { kind: "consumer", userId: g.userId }, amount: g.amount },
    ],
    { adminId: g.admin.id, admin: g.admin.name, reason: g.reason },
  );
}

export const earningsTransferKey = (transferId: string) => `earnings-transfer:${transferId}`;

/** A user moves what their machines earned (their producer account) to their consumer account. */
export function earningsTransfer(t: { transferId: string; userId: string; amount: bigint }): Entry {
  return entry(
    "earnings-transfer",
    earningsTransferKey(t.transferId),
    [
      { account: { kind: "producer", userId: t.userId }, amount: -t.amount },
      { account: { kind: "consumer", userId: t.userId }, amount: t.amount },
    ],
    {},
  );
}

/**
 * Admission puts aside, from the consumer's balance, what the job can be charged (costbenefit
 * `escrowFor`). A job run as pilots first escrows its remainder on its own when it is admitted.
 */
export function escrow(e: { jobId: string; consumerId: string; amount: bigint; part?: "remainder" | null }): Entry {
  return entry(
    "escrow",
    e.part ? `escrow:${e.jobId}:${e.part}` : `escrow:${e.jobId}`,
    [
      { account: { kind: "consumer", userId: e.consumerId }, amount: -e.amount },
      { account: { kind: "escrow", jobId: e.jobId }, amount: e.amount },
    ],
    { escrowMicro: e.amount.toString() },
    e.jobId,
  );
}

/** What a run was paid for: an accepted result, a confirmed failure, or a pilot's measured work. */
export type PieceOf = "result" | "failure" | "pilot";

/**
 * A piece rate paid for one run, fixed when its lease was handed out: from the job's escrow, and
 * from the market's account for whatever the escrow no longer covers (a retry or an extra replica
 * the consumer does not pay for).
 */
export function piece(p: {
  resultId: string;
  jobId: string;
  taskId: string;
  producerId: string;
  machineId: string;
  fromEscrow: bigint;
  fromMarket: bigint;
  of: PieceOf;
}): Entry {
  return entry(
    "payment",
    `pay:${p.resultId}`,
    [
      { account: { kind: "escrow", jobId: p.jobId }, amount: -p.fromEscrow },
      { account: { kind: "market" }, amount: -p.fromMarket },
      { account: { kind: "producer", userId: p.producerId }, amount: p.fromEscrow + p.fromMarket },
    ],
    // Only what the postings and the result (its key names it) do not say already: one per run written alone.
    { machineId: p.machineId, of: p.of },
    p.jobId,
    p.taskId,
  );
}

/** One accepted result's piece among a group's (`pieces`): the machine that ran it and its piece rate. */
export interface GroupPiece {
  machineId: string;
  amount: bigint;
}

/**
 * The pieces one producer earned for accepted results of one job in one group of reports
 * (tasks/report-rows.ts), paid from the job's escrow as one entry: the sum of the piece rates fixed
 * when each task was leased. What each task was paid is on its result (Result.paidMicro), and
 * "paid once" is the task's own move from leased to done in the same statement, so the entry's key
 * is its own id. The memo tells the statement how many results it pays, at which rates, on which
 * machines.
 */
export function groupPayment(p: { jobId: string; producerId: string; pieces: readonly GroupPiece[] }): Entry {
  const total = p.pieces.reduce((s, x) => s + x.amount, 0n);
  const rates = new Map<bigint, number>();
  for (const x of p.pieces) rates.set(x.amount, (rates.get(x.amount) ?? 0) + 1);
  const id = rowId();
  return entry(
    "payment",
    `pay-group:${id}`,
    [
      { account: { kind: "escrow", jobId: p.jobId }, amount: -total },
      { account: { kind: "producer", userId: p.producerId }, amount: total },
    ],
    {
      of: "result",
      tasks: p.pieces.length,
      machineIds: [...new Set(p.pieces.map((x) => x.machineId))],
      // [piece rate in micro-credits, how many results were paid it]
      rates: [...rates].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([micro, n]) => [micro.toString(), n]),
    },
    p.jobId,
    null,
    id,
  );
}

export const forfeitKey = (jobId: string, producerId: string) => `forfeit:${jobId}:${producerId}`;

/**
 * A producer caught forging in a job gives up what the job paid it (as far as its earnings still
 * hold it) to the market's account. Never to the job's consumer: one person could otherwise have an
 * honest producer outvoted on their own job and take its pay.
 */
export function forfeit(f: { jobId: string; taskId: string; producerId: string; amount: bigint; paidMicro: bigint }): Entry {
  return entry(
    "forfeit",
    forfeitKey(f.jobId, f.producerId),
    [
      { account: { kind: "producer", userId: f.producerId }, amount: -f.amount, keep: true },
      { account: { kind: "market" }, amount: f.amount, keep: true },
    ],
    { reason: "caught-forging", paidMicro: f.paidMicro.toString(), forfeitMicro: f.amount.toString() },
    f.jobId,
    f.taskId,
  );
}

/**
 * A job's settlement, completed or not: the escrow gives up all it holds (`held`); the consumer
 * gets `refund` (kept when zero: their statement shows the job was settled), the late producers
 * their held pieces less the lateness they paid for, and the market the rest, which is negative
 * when it pays towards the consumer's relief (its own downtime).
 */
export function settlement(s: { jobId: string; consumerId: string; held: bigint; refund: bigint; heldPaid: { producerId: string; amount: bigint }[]; memo: unknown }): Entry {
  const toProducers = s.heldPaid.reduce((t, h) => t + h.amount, 0n);
  return entry(
    "settlement",
    `settle:${s.jobId}`,
    [
      { account: { kind: "escrow", jobId: s.jobId }, amount: -s.held },
      { account: { kind: "consumer", userId: s.consumerId }, amount: s.refund, keep: true },
      ...s.heldPaid.map((h): Posting => ({ account: { kind: "producer", userId: h.producerId }, amount: h.amount })),
      { account: { kind: "market" }, amount: s.held - s.refund - toProducers },
    ],
    s.memo,
    s.jobId,
  );
}

/** A dedicated machine's contract, paid from the market's account for the time it proved itself there. */
export function contract(c: { machineId: string; producerId: string; amount: bigint; fromMs: number; toMs: number }): Entry {
  return entry(
    "contract",
    `contract:${c.machineId}:${c.fromMs}`,
    [
      { account: { kind: "market" }, amount: -c.amount },
      { account: { kind: "producer", userId: c.producerId }, amount: c.amount },
    ],
    { machineId: c.machineId, from: new Date(c.fromMs).toISOString(), to: new Date(c.toMs).toISOString() },
  );
}

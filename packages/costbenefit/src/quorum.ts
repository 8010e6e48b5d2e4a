// Verification that standing decides (docs/DESIGN.md "Verification"). A task's copies report
// output hashes; only accounts with standing count towards a quorum, one vote per verifier (an
// account, or an organisation's confirmed mail domain: policies/standing.ts verifierOf), and one
// owner's machines count once, and so does one network's (where the market knows it: a public
// /24 or /48; a private or loopback address says nothing of who is behind it). A result from accounts without standing is never accepted until
// an account with standing agrees with it: the engine asks for one more copy, placed on a machine
// of such an account, instead of accepting it.

/** One copy's report: the output hash, who ran it, and whether that account had standing. */
export interface CopyVote {
  hash: string;
  owner: string;
  /** The quorum's unit for this owner (verifierOf); the owner's id when not given. */
  verifier?: string;
  /** The network the copy ran from, where known: two votes from one network count once. */
  network?: string | null;
  standing: boolean;
}

export interface VerifyInput {
  votes: readonly CopyVote[];
  /** The consumer's floor: the job's `replicas`. */
  replicas: number;
  /** Copies of the task that exist (reported, running or waiting), added ones included. */
  copies: number;
  /** Some copy has not reported yet. */
  copiesOut: boolean;
  /** The single-copy result was drawn for a spot check, or the task has copies added already: two accounts must agree. */
  checked: boolean;
  /** The hash agreed before these votes, if any: the votes are then only judged against it. */
  agreedBefore?: string | null | undefined;
}

export interface Verdict {
  /** The accepted hash, or null. */
  agreed: string | null;
  /** Distinct owners whose copies report the accepted hash. */
  owners: number;
  /** Verifiers with standing behind the accepted hash. */
  support: number;
  /** Every copy reported without a verdict and the task may have more: one more copy, on a machine of an account with standing. */
  addCopy: boolean;
  /** Copies at their cap without a verdict: all run again (the task's attempts bound this). */
  rerun: boolean;
  /** Owners whose result agreed with the accepted hash while another account with standing did too: their verified results grow. */
  verified: string[];
  /** Owners whose result disagrees with the accepted hash. */
  disagreed: string[];
  /**
   * Of those, the ones caught forging: the accepted output leads theirs by two verifiers with
   * standing at least. One with standing contradicted by a narrower margin only disagreed: two
   * accounts of one person cannot brand an honest one.
   */
  forgers: string[];
  /**
   * One of the forgers had standing: the copies its contest needed are paid as contestPieces says,
   * the consumer's agreeing copies first, the market's account paying past the task's budget as far
   * as the forfeits it received go.
   */
  standingForger: boolean;
}

/** Owners that must agree among k copies: a strict majority. */
export function quorumOf(replicas: number): number {
  return Math.floor(replicas / 2) + 1;
}

/** The most copies a task may have: the consumer's k and enough added ones to settle a contest. */
export function maxCopies(replicas: number): number {
  return replicas + quorumOf(replicas) + 2;
}

/** Verifiers with standing an output must lead every other by, when the copies disagree. */
export const CONTEST_MARGIN = 2;

/**
 * The verdict on a task's copies so far. A hash is accepted when at least a strict majority of
 * the consumer's k verifiers with standing report it, more than report any other output; when
 * the task is checked, two owners at least report it; when the copies disagree at all, two
 * verifiers with standing at least, leading every other output by CONTEST_MARGIN verifiers with
 * standing. One vote never settles a contest between accounts with standing: two accounts of one
 * person would otherwise outvote an honest one, and be paid its piece. The task then takes more
 * copies, placed by the market's draw (drawnMachine).
 */
export function verifyCopies(input: VerifyInput): Verdict {
  const need = quorumOf(input.replicas);
  const byHash = new Map<string, { owners: Set<string>; support: Set<string>; networks: Set<string> }>();
  for (const v of input.votes) {
    const h = byHash.get(v.hash) ?? { owners: new Set<string>(), support: new Set<string>(), networks: new Set<string>() };
    h.owners.add(v.owner);
    const verifier = v.verifier ?? v.owner;
    // A second verifier on a network that already vouched for this hash adds nothing: one person's accounts behind one address.
    if (v.standing && !h.support.has(verifier) && !(v.network && h.networks.has(v.network))) {
      h.support.add(verifier);
      if (v.network) h.networks.add(v.network);
    }
    byHash.set(v.hash, h);
  }
  let agreed: string | null = input.agreedBefore ?? null;
  if (agreed === null) {
    const contested = byHash.size > 1;
    for (const [hash, h] of byHash) {
      const support = h.support.size;
      if (support < need) continue;
      let rival = 0;
      for (const [other, o] of byHash) if (other !== hash) rival = Math.max(rival, o.support.size);
      if (support <= rival) continue;
      if (input.checked && h.owners.size < 2) continue;
      if (contested && support - rival < CONTEST_MARGIN) continue;
      agreed = hash;
      break;
    }
  }
  if (agreed === null) {
    const more = !input.copiesOut && input.copies < maxCopies(input.replicas);
    return { agreed: null, owners: 0, support: 0, addCopy: more, rerun: !input.copiesOut && !more, verified: [], disagreed: [], forgers: [], standingForger: false };
  }
  const h = byHash.get(agreed);
  const owners = h?.owners.size ?? 0;
  // Support for the accepted hash counts every vote for it, earlier ones included.
  const support = h?.support.size ?? 0;
  const verified: string[] = [];
  for (const v of input.votes) {
    if (v.hash !== agreed || verified.includes(v.owner)) continue;
    const self = v.standing ? (v.verifier ?? v.owner) : null;
    // Agreement with another account's standing: its own vote does not vouch for it.
    if (support - (self !== null && h!.support.has(self) ? 1 : 0) >= 1) verified.push(v.owner);
  }
  const disagreed = [...new Set(input.votes.filter((v) => v.hash !== agreed).map((v) => v.owner))];
  const forging = input.votes.filter((v) => v.hash !== agreed && support - (byHash.get(v.hash)?.support.size ?? 0) >= CONTEST_MARGIN);
  const forgers = [...new Set(forging.map((v) => v.owner))];
  return { agreed, owners, support, addCopy: false, rerun: false, verified, disagreed, forgers, standingForger: forging.some((v) => v.standing) };
}

/** Who ran a copy, or holds it, as the different-owners rule sees them. */
export interface CopyHolder {
  owner: string;
  /** The quorum's unit (verifierOf); the owner when not given. */
  verifier?: string;
  machine?: string;
  /** The network it ran from, where known. */
  network?: string | null;
}

/**
 * The one rule copies of a task are placed by (the engine's planner, plan.ts, and the live market
 * as machines take work): a copy may not run where a copy of the same task ran or runs on a
 * machine of the same owner, the same verifier or the same known network, or their agreement would prove nothing; a
 * copy verification added runs only on a machine of an account with standing. Returns the
 * holder that rules the machine out, `"standing"`, or null when it may run it.
 */
export function copyConflict(
  machine: { id: string; owner: string; verifier?: string; network?: string | null; standing: boolean },
  copy: { added: boolean; ranBy: readonly CopyHolder[] },
): CopyHolder | "standing" | null {
  const verifier = machine.verifier ?? machine.owner;
  for (const h of copy.ranBy) {
    if (h.machine === machine.id || h.owner === machine.owner || (h.verifier ?? h.owner) === verifier) return h;
    if (machine.network && h.network === machine.network) return h;
  }
  if (copy.added && !machine.standing) return "standing";
  return null;
}

/** A judged copy of a task, as copyPieces pays it. */
export interface JudgedCopy {
  /** Its copy number: below the job's replicas one of the consumer's k, from there one verification added. */
  replica: number;
  /** Its lease's piece, micro-credits. */
  piece: bigint;
  /** It reported the accepted output. */
  agrees: boolean;
  /** Its owner was caught forging in this job and is paid nothing more of it. */
  forfeited: boolean;
  /** Its owner has standing: the runs of accounts without it pay for the checks first. */
  standing: boolean;
}

/** What a task's copies judged before these ones were leased for and paid (copyPieces). */
export interface EarlierCopies {
  /** The pieces of the consumer's copies not among those judged now, where known. */
  leased: bigint;
  /** What the task's copies were paid (or have held for lateness) so far. */
  paid: bigint;
}

/**
 * What each judged copy of a task is paid, micro-credits, all of it from the job's escrow. The
 * task's budget is its share of the quote (`share`), or the pieces the consumer's k copies were
 * leased for when more, less what its copies were paid already: whatever copies it takes and
 * however they are judged, a task costs no more. A copy verification added (a fresh account's
 * check, a spot check, a tie-break) is paid its piece out of the budget as far as it goes, taken
 * first from what the consumer's copies leave of it (the market's margin), then from the
 * consumer's copies that are paid nothing (disagreeing or forfeited), then from those of accounts
 * without standing, then from the rest. So the market's account pays for no check, and a copy
 * judged after its task was decided is paid only from what the budget still holds.
 */
export function copyPieces(copies: readonly JudgedCopy[], replicas: number, share: bigint, earlier: EarlierCopies = { leased: 0n, paid: 0n }): bigint[] {
  const out = copies.map(() => 0n);
  const consumers = copies.map((c, i) => ({ c, i })).filter(({ c }) => c.replica < replicas);
  const whole = taskBudget(consumers.reduce((s, { c }) => s + c.piece, earlier.leased), share);
  let left = whole > earlier.paid ? whole - earlier.paid : 0n;
  const added = copies.map((c, i) => ({ c, i })).filter(({ c }) => c.replica >= replicas && c.agrees && !c.forfeited);
  for (const { c, i } of added.sort((a, b) => a.c.replica - b.c.replica)) {
    out[i] = min(c.piece, left);
    left -= out[i];
  }
  // The consumer's paid copies share what is left, those of accounts without standing giving way first.
  const order = consumers.filter(({ c }) => c.agrees && !c.forfeited).sort((a, b) => Number(a.c.standing) - Number(b.c.standing) || a.c.replica - b.c.replica);
  let short = order.reduce((s, { c }) => s + c.piece, 0n) - left;
  for (const { c, i } of order) {
    const take = short > 0n ? min(short, c.piece) : 0n;
    out[i] = c.piece - take;
    short -= take;
  }
  return out;
}

/**
 * What each judged copy of a task is paid when a forger with standing was caught (Verdict
 * `standingForger`). The task's budget (what copyPieces pays in all) goes to the consumer's
 * agreeing copies of accounts with standing first, each its whole piece, then to the checks the
 * contest added, in the order they were added, then to the consumer's copies of accounts without
 * standing; past the budget the market's account pays them (`fromMarket`) no more than
 * `cover`, what the forgers' forfeits brought it in this report. So honest producers are not left
 * unpaid by a contest they did not make, and the market never pays for one out of its own: one
 * person burning an account it made standing for could otherwise have the market pay its other
 * accounts' checks, at asks of its choosing, once for every task in flight.
 */
export function contestPieces(copies: readonly JudgedCopy[], replicas: number, share: bigint, earlier?: EarlierCopies, cover = 0n): { pieces: bigint[]; fromMarket: bigint[] } {
  const budget = copyPieces(copies, replicas, share, earlier);
  // The consumer's copies of accounts with standing, then the checks, then the consumer's copies of accounts without it (they pay for checks first, as in copyPieces).
  const rank = (c: JudgedCopy) => (c.replica >= replicas ? 1 : c.standing ? 0 : 2);
  const pieces = copies.map(() => 0n);
  const fromMarket = copies.map(() => 0n);
  const order = copies
    .map((c, i) => ({ c, i }))
    .filter(({ c }) => c.agrees && !c.forfeited)
    .sort((a, b) => rank(a.c) - rank(b.c) || a.c.replica - b.c.replica);
  let left = budget.reduce((s, b) => s + b, 0n);
  for (const { c, i } of order) {
    pieces[i] = min(c.piece, left);
    left -= pieces[i];
  }
  let covered = cover > 0n ? cover : 0n;
  for (const { c, i } of order) {
    fromMarket[i] = min(c.piece - pieces[i]!, covered);
    covered -= fromMarket[i];
    pieces[i] = pieces[i]! + fromMarket[i]!;
  }
  return { pieces, fromMarket };
}

/**
 * The piece a lease of a copy verification added states: its machine's piece, at most the task's
 * budget as copyPieces counts it (its share of the quote, or what the consumer's copies that ran
 * were leased for when more).
 */
export function addedCopyPiece(piece: bigint, consumerPieces: readonly bigint[], share: bigint): bigint {
  return min(piece, taskBudget(consumerPieces.reduce((s, p) => s + p, 0n), share));
}

/** A task's budget for its copies: its share of the quote, or what the consumer's copies were leased for when more. */
const taskBudget = (leased: bigint, share: bigint) => (leased > share ? leased : share);
const min = (a: bigint, b: bigint) => (a < b ? a : b);

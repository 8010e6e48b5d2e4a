// Verification by replication (docs/DESIGN.md "Verification"): a task run as k copies is done when
// copies from a majority of k different owners report the same output, and at least one of those
// owners has standing. One owner's machines count once, or a producer with k machines could forge
// a quorum alone; and accounts cost nothing to make, so a quorum of accounts without standing
// (an address never confirmed) could be forged by one person with k fresh accounts.

/** One copy's report: the output hash, who ran it, and whether that account has standing. */
export interface CopyVote {
  hash: string;
  owner: string;
  /** False for an account without standing: it counts toward a quorum only beside one that has. */
  standing?: boolean;
}

export interface Tally {
  /** The hash a majority of owners agree on, or null. */
  agreed: string | null;
  /** How many distinct owners agree on it (0 when none). */
  owners: number;
  /** Every copy has reported and no majority agrees: the copies must all run again. */
  rerun: boolean;
}

/** Owners that must agree among k copies: a strict majority. */
export function quorumOf(replicas: number): number {
  return Math.floor(replicas / 2) + 1;
}

/** The verdict on a task's copies so far, given their votes and whether any copy is still out. */
export function tallyCopies(votes: readonly CopyVote[], replicas: number, copiesStillOut: boolean): Tally {
  const byHash = new Map<string, Set<string>>();
  for (const v of votes) byHash.set(v.hash, (byHash.get(v.hash) ?? new Set()).add(v.owner));
  const need = quorumOf(replicas);
  const vouched = (hash: string) => replicas < 2 || votes.some((v) => v.hash === hash && v.standing !== false);
  for (const [hash, owners] of byHash) if (owners.size >= need && vouched(hash)) return { agreed: hash, owners: owners.size, rerun: false };
  return { agreed: null, owners: 0, rerun: !copiesStillOut };
}

// The policy lab's verification simulation (bench:verify): honest producers and a fraction of
// forgers who open fresh accounts at will, every result decided by the engine's own rules
// (policies/standing.ts for standing and spot checks, quorum.ts for verdicts). A forger behaves
// honestly until its account's spot-check fraction has fallen to the level it waits for (drawn
// per account, from "as soon as it has standing" to "the floor"), then forges every result it
// runs, as an original or as a check, all forgers reporting the same forged output (they
// collude). A caught forger's account is burnt; it opens a fresh one. Honest producers leave
// after `lifetime` results and are replaced by fresh accounts.
import type { Rng } from "../rng.ts";
import { DEFAULT_STANDING_RULES, spotChecked, standingOf, type StandingRules } from "../policies/standing.ts";
import { verifyCopies, type CopyVote } from "../quorum.ts";

export interface VerificationSimInput {
  /** Fraction of producer places held by forgers. */
  forgers: number;
  /** Producer places (each an account at a time). */
  producers: number;
  /** Single-copy tasks measured (after the accounts' histories are laid down). */
  tasks: number;
  /** Results an honest producer runs before it leaves and a fresh account takes its place. */
  lifetime: number;
  rules?: StandingRules;
}

export interface VerificationSimResult {
  forgers: number;
  /** Accepted tasks whose accepted output was forged, over all accepted tasks. */
  forgedAccepted: number;
  /** Runs (originals, added copies, spot checks) per accepted task; the consumer asked for 1. */
  replicationOverhead: number;
  accepted: number;
  forgeriesCaught: number;
  forgerAccounts: number;
}

interface Account {
  forger: boolean;
  /** The spot-check fraction at or below which a forger starts forging. */
  forgeAt: number;
  verified: number;
  disagreements: number;
  forgeries: number;
  /** Results it ran as an original (an honest account leaves at `lifetime`). */
  ran: number;
  id: number;
}

const REAL = "real";
const FORGED = "forged";

export function simulateVerification(input: VerificationSimInput, rng: Rng): VerificationSimResult {
  const rules = input.rules ?? DEFAULT_STANDING_RULES;
  let nextId = 0;
  let forgerAccounts = 0;
  const standing = (a: Account) =>
    standingOf({ trusted: false, emailConfirmed: true, ageSeconds: rules.minAgeSeconds, verified: a.verified, disagreements: a.disagreements, unconfirmedFailures: 0, expiredLeases: 0, forgeries: a.forgeries }, rules);
  const fresh = (forger: boolean): Account => {
    if (forger) forgerAccounts++;
    // A forger waits for a spot-check fraction between the floor and 1 (1: forges as soon as it has standing).
    const forgeAt = forger ? rules.spotCheckFloor + rng.next() * (1 - rules.spotCheckFloor) : 0;
    return { forger, forgeAt, verified: 0, disagreements: 0, forgeries: 0, ran: 0, id: nextId++ };
  };
  const forging = (a: Account) => {
    if (!a.forger) return false;
    const s = standing(a);
    return s.has && s.spotCheck <= a.forgeAt;
  };
  // The market in its steady state: each account has run part of its life already, honestly
  // verified as the rules would have checked it (a forger too, until it starts forging).
  const places: Account[] = [];
  const forgerPlaces = Math.round(input.forgers * input.producers);
  for (let i = 0; i < input.producers; i++) {
    const a = fresh(i < forgerPlaces);
    const past = rng.int(input.lifetime);
    for (let n = 0; n < past && !forging(a); n++) {
      a.ran++;
      const s = standing(a);
      if (!s.has || rng.next() < s.spotCheck) a.verified++;
    }
    places.push(a);
  }

  let accepted = 0;
  let forgedAccepted = 0;
  let runs = 0;
  let caught = 0;
  const replace = (i: number) => {
    places[i] = fresh(places[i]!.forger);
  };
  for (let t = 0; t < input.tasks; t++) {
    const taskId = `t${t}`;
    // A task whose copies never settle is run again from the start (bounded: maxCopies per round).
    for (let round = 0; round < 4; round++) {
      const first = rng.int(places.length);
      const original = places[first]!;
      original.ran++;
      const ranBy = [first];
      const votes: CopyVote[] = [];
      const vote = (i: number) => {
        const a = places[i]!;
        runs++;
        votes.push({ hash: forging(a) ? FORGED : REAL, owner: String(a.id), standing: standing(a).has });
      };
      vote(first);
      const own = standing(original);
      const checked = own.has && spotChecked("sim", `${taskId}:${round}`, own.spotCheck);
      let copies = 1;
      let verdict = verifyCopies({ votes, replicas: 1, copies, copiesOut: false, checked });
      while (verdict.addCopy) {
        const checker = pickChecker(places, ranBy, rng, standing);
        if (checker < 0) break;
        ranBy.push(checker);
        copies++;
        vote(checker);
        verdict = verifyCopies({ votes, replicas: 1, copies, copiesOut: false, checked: true });
      }
      // The facts the verdict establishes, as the Market Manager records them.
      const byId = new Map(ranBy.map((i) => [String(places[i]!.id), places[i]!]));
      for (const o of verdict.verified) byId.get(o)!.verified++;
      for (const o of verdict.disagreed) byId.get(o)!.disagreements++;
      for (const o of verdict.forgers) {
        byId.get(o)!.forgeries++;
        caught++;
      }
      for (const i of ranBy) {
        const a = places[i]!;
        if (a.forgeries > 0 || (!a.forger && a.ran >= input.lifetime)) replace(i);
      }
      if (verdict.agreed !== null) {
        accepted++;
        if (verdict.agreed === FORGED) forgedAccepted++;
        break;
      }
    }
  }
  return {
    forgers: input.forgers,
    forgedAccepted: accepted ? forgedAccepted / accepted : 0,
    replicationOverhead: accepted ? runs / accepted : 0,
    accepted,
    forgeriesCaught: caught,
    forgerAccounts,
  };
}

/** A machine of an account with standing that has not run this task, drawn at random (bounded tries, then a scan). */
function pickChecker(places: readonly Account[], ranBy: readonly number[], rng: Rng, standing: (a: Account) => { has: boolean }): number {
  for (let tries = 0; tries < 64; tries++) {
    const i = rng.int(places.length);
    if (!ranBy.includes(i) && standing(places[i]!).has) return i;
  }
  for (let i = 0; i < places.length; i++) if (!ranBy.includes(i) && standing(places[i]!).has) return i;
  return -1;
}


// npm run -s bench:verify -- [--tasks N] [--producers P] [--lifetime L] [--seed S] [--json]
// The verification simulation (src/sim/verification.ts): for a fraction f of forgers opening
// fresh accounts at will, the fraction of accepted results that were forged and the runs per
// accepted result, under the engine's standing and verification rules.
import { createRng, DEFAULT_STANDING_RULES } from "../src/index.ts";
import { simulateVerification } from "../src/sim/verification.ts";
import { intArg, parseArgs, table } from "./args.ts";

const args = parseArgs(process.argv.slice(2));
const tasks = intArg(args, "tasks", 400_000);
const producers = intArg(args, "producers", 200);
const lifetime = intArg(args, "lifetime", 50_000);
const seed = typeof args.seed === "string" ? args.seed : "verify";
const rows = [0.01, 0.1, 0.3].map((forgers) => simulateVerification({ forgers, producers, tasks, lifetime }, createRng(`${seed}:${forgers}`)));

if (args.json === true) {
  console.log(JSON.stringify({ rows: rows.map((r) => ({ forgers: r.forgers, forgedAccepted: r.forgedAccepted, replicationOverhead: r.replicationOverhead })), tasks, producers, lifetime, rules: DEFAULT_STANDING_RULES }));
} else {
  console.log(`${tasks} single-copy tasks, ${producers} producer places, honest producers leave after ${lifetime} results\n`);
  console.log(table([["forgers", "forgedAccepted", "replicationOverhead", "accepted", "forgeries caught", "forger accounts"], ...rows.map((r) => [String(r.forgers), r.forgedAccepted.toExponential(2), r.replicationOverhead, r.accepted, r.forgeriesCaught, r.forgerAccounts])]));
}

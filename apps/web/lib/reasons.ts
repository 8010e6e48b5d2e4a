// Reasons are data (a code and the numbers behind it); this is the one place they become words.
// Every page renders decisions, refusals and failures through describeReason.
// The table of sentences is keyed by the market's vocabulary (MarketReasonCode, from the engine
// package): a code the market can give without a sentence here does not compile.
import { credits, dateTime, number, seconds } from "./format";
import { describeJobReason } from "@cyclemarket/client/job-file";
import { OUTAGE_WORDS, isOutage } from "./outage";
import { JobFileReason, type MarketReasonCode, type SandboxFailure } from "@cyclemarket/costbenefit";

export type Reason = { code: string; [detail: string]: unknown };

const num = (r: Reason, key: string): number | null => (typeof r[key] === "number" ? (r[key] as number) : null);
const str = (r: Reason, key: string): string | null => (typeof r[key] === "string" ? (r[key] as string) : null);

/** An instant of a reason: milliseconds since the epoch, as every time on the wire is. */
function instant(value: number | null): string {
  return value == null ? "an unknown time" : dateTime(value);
}

const EXCLUSION_WORDS: Record<string, string> = {
  unavailable: "switched off by their producers (paused, outside their schedule, or in use)",
  memory: "too little memory",
  reputation: "too low a reputation",
  replica: "already given another copy of the task",
  departure: "leaving too soon",
  deadline: "unable to finish in time",
  horizon: "booked beyond the planning horizon",
  memoryFull: "with their memory in use",
};

function exclusions(value: unknown): string {
  if (typeof value !== "object" || value === null) return "";
  const parts = Object.entries(value as Record<string, unknown>)
    .filter(([k, v]) => k !== "inspected" && typeof v === "number" && v > 0)
    .map(([k, v]) => `${v} ${EXCLUSION_WORDS[k] ?? k}`);
  return parts.length ? ` (${parts.join(", ")})` : "";
}

const plural = (n: number | null, one: string, many: string) => `${n ?? "?"} ${n === 1 ? one : many}`;
const listed = (xs: number[]) => (xs.length <= 1 ? String(xs[0] ?? "?") : `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`);

/** The engine names copy r >= 1 of task t `${t}~${r}`; task ids mean nothing to a consumer. */
function whichTask(taskId: string | null): string {
  const copy = taskId ? /~(\d+)$/.exec(taskId) : null;
  return copy ? `copy ${Number(copy[1]) + 1} of a task` : "one of the tasks";
}

/** "the one that ran copy 1", "the ones running copies 1 and 2": the machines a waiting copy may not use. */
function holders(value: unknown): string {
  const copies = Array.isArray(value) ? (value as unknown[]).filter((c): c is { copy: number; state?: unknown } => typeof c === "object" && c !== null && typeof (c as { copy?: unknown }).copy === "number") : [];
  const numbers = copies.map((c) => c.copy);
  const running = copies.every((c) => c.state === "leased");
  const ran = copies.every((c) => c.state !== "leased");
  const one = copies.length === 1;
  const verb = ran ? "that ran" : running ? "running" : "that ran or are running";
  return `the ${one ? "one" : "ones"} ${verb} ${one ? "copy" : "copies"} ${listed(numbers)}`;
}

/** Module refusals by the sandbox's own code; the market sends them as `module-<code>`. */
const MODULE_REFUSALS = {
  "too-large": (r) => `The module is over the size limit: ${number(num(r, "bytes"), 0)} bytes, the limit is ${number(num(r, "maxBytes"), 0)}.`,
  "not-wasm": () => "The file is not a WebAssembly module (it does not start with the WebAssembly header).",
  "invalid-wasm": (r) => `The file is not valid WebAssembly${str(r, "detail") ? `: ${str(r, "detail")}` : ""}.`,
  "forbidden-import": (r) =>
    `The module imports ${str(r, "module") ?? "?"}.${str(r, "name") ?? "?"}, which the sandbox does not allow: only WASI preview 1 calls are served.`,
  "no-start": () => "The module has no _start function: it must be a WASI command.",
  "bad-start-signature": (r) => `The module's _start must take and return nothing (it takes ${num(r, "params")} and returns ${num(r, "results")}).`,
  "no-memory": () => "The module does not export its memory.",
  "unsupported-memory": (r) => `The module's memory is not supported (${str(r, "feature") ?? "unknown feature"}).`,
  "memory-too-large": (r) => `The module starts with ${num(r, "initialPages")} pages of memory; the limit is ${num(r, "maxMemoryPages")} pages.`,
} satisfies Record<string, (r: Reason) => string>;

const SANDBOX_FAILURES: Record<SandboxFailure, string> = {
  trap: "the program crashed (a WebAssembly trap)",
  timeout: "the task ran past its time limit",
  "output-limit": "the task wrote more output than allowed",
  "memory-limit": "the task needed more memory than allowed",
  "invalid-module": "the module could not be compiled",
  crashed: "the sandbox thread died",
  aborted: "the task was given up",
  "nonzero-exit": "the program exited with an error",
  "no-quorum": "the replicas' outputs never agreed on a majority",
};

/** A failed run's code as the market records it (a sandbox failure, or `exit:N`), in words. */
export function failureWords(code: string): string {
  if (Object.hasOwn(SANDBOX_FAILURES, code)) return SANDBOX_FAILURES[code as SandboxFailure];
  const exit = /^exit:(-?\d+)$/.exec(code);
  return exit ? `the program exited with code ${exit[1]}` : code;
}

/** The market's limits (the README's table), as a person would name them. */
const LIMIT_WORDS: Record<string, string> = {
  "quotes-per-minute": "quotes a minute",
  "submissions-per-minute": "job submissions a minute",
  "queued-tasks-per-user": "tasks of yours waiting in the market",
  "streams-per-machine": "live connections for one machine",
  "streams-per-user": "live connections for one user",
  "calls-per-batch": "calls in one request",
  "sign-ins-per-minute": "sign-in attempts a minute from this address",
  "sign-ups-per-minute": "sign-ups a minute from this address",
  "auth-requests-per-minute": "account requests a minute from this address",
  "auth-body-bytes": "bytes in one account request",
};
const limitWords = (r: Reason) => LIMIT_WORDS[str(r, "limit") ?? ""] ?? str(r, "limit") ?? "requests";

/** Job file reasons: the client package holds their words, for the CLI too. */
const JOB_FILE_WORDS = Object.fromEntries(
  JobFileReason.options.map((o) => [o.shape.code.value, (r: Reason) => describeJobReason(r) ?? `${r.code}.`]),
) as Record<JobFileReason["code"], (r: Reason) => string>;

const DESCRIBE: Record<MarketReasonCode, (r: Reason) => string> = {
  ...JOB_FILE_WORDS,
  "module-too-large": (r) => describeJobReason(r) ?? MODULE_REFUSALS["too-large"](r),
  "module-unknown": (r) => describeJobReason(r) ?? `You have not uploaded a module with hash ${str(r, "hash") ?? "?"}: upload its bytes first.`,
  "module-not-wasm": MODULE_REFUSALS["not-wasm"],
  "module-invalid-wasm": MODULE_REFUSALS["invalid-wasm"],
  "module-forbidden-import": MODULE_REFUSALS["forbidden-import"],
  "module-no-start": MODULE_REFUSALS["no-start"],
  "module-bad-start-signature": MODULE_REFUSALS["bad-start-signature"],
  "module-no-memory": MODULE_REFUSALS["no-memory"],
  "module-unsupported-memory": MODULE_REFUSALS["unsupported-memory"],
  "module-memory-too-large": MODULE_REFUSALS["memory-too-large"],
  "token-scope": (r) => describeJobReason(r)!,
  "token-cannot-mint": (r) => describeJobReason(r)!,
  "scope-needs-role": (r) => describeJobReason(r)!,
  "request-too-large": (r) => describeJobReason(r)!,
  "invalid-input": (r) =>
    (Array.isArray(r.issues) ? (r.issues as { path?: string[]; message?: string }[]) : [])
      .map((i) => `${fieldName(i.path ?? [])}${i.message ?? "is not valid"}`)
      .join(" ") || "Something in the request is not valid.",
  "database-unavailable": () => "The market's database cannot be reached right now; the page reconnects by itself.",
  "internal-error": (r) => `The market could not complete this request; try again. If it keeps failing, quote request ${str(r, "requestId") ?? "(unknown)"} to the admin.`,
  "limit-reached": (r) => {
    const retry = num(r, "retryAfterSeconds");
    return `You reached a limit: at most ${number(num(r, "max"), 0)} ${limitWords(r)}.${retry ? ` Try again in ${seconds(retry)}.` : ""}`;
  },
  "market-busy": (r) => `The market is busy right now (over ${number(num(r, "max"), 0)} calls waiting); try again in ${seconds(num(r, "retryAfterSeconds") ?? 1)}.`,
  "client-gone": () => "The request was closed before the market reached it; nothing was done.",
  "batch-too-large": (r) => `One request may carry at most ${number(num(r, "max"), 0)} calls.`,
  "body-too-large": (r) => `That is too large to send: at most ${number(num(r, "max"), 0)} ${limitWords(r)}.`,
  profitable: (r) =>
    `Worth running: the benefit of ${credits(num(r, "benefit"))} beats the marginal cost of ${credits(num(r, "marginalCost"))}` +
    `, completing at ${instant(num(r, "completionAt"))}.`,
  unprofitable: (r) =>
    `Not worth running now: the benefit of ${credits(num(r, "benefit"))} does not cover the marginal cost of ${credits(num(r, "marginalCost"))}` +
    (num(r, "completionAt") != null ? ` (best completion at ${instant(num(r, "completionAt"))})` : "") +
    (num(r, "benefitNeeded") != null ? `. A benefit above ${credits(num(r, "benefitNeeded"))} at that completion would be admitted now.` : "."),
  // The share policies (the Millennium paper, 001, 002, 004): the terms the job was given and what they bought.
  tickets: (r) =>
    `Admitted with ${number(num(r, "tickets"), 2)} tickets (its share of the market's slots); ${plural(num(r, "freeSlots"), "slot is", "slots are")} free, ` +
    `${number(num(r, "usagePerTicket"), 3)} seconds of use per ticket so far.`,
  "waiting-for-slot": (r) => `Waiting for a free slot: ${plural(num(r, "freeSlots"), "slot is", "slots are")} free and ${plural(num(r, "jobsAhead"), "job is", "jobs are")} ahead of it.`,
  "over-p-max": (r) => `${whichTask(str(r, "taskId"))} ran ${seconds(num(r, "runSeconds"))}, past the longest a task may run under this policy (${seconds(num(r, "pMaxSeconds"))}), and was stopped.`,
  "least-usage-per-ticket": (r) => `Its turn: the job with the least use per ticket (${number(num(r, "usagePerTicket"), 3)} s per ticket) gets the next free slot.`,
  "opportunity-cost": (r) =>
    `Admitted at ${credits(num(r, "ratePerMinute"))} a minute against a machine price of ${credits(num(r, "nodePricePerMinute"))} a minute: ` +
    `a ${number((num(r, "share") ?? 0) * 100, 0)}% share, expected to cost ${credits(num(r, "expectedCharge"))}.`,
  "over-budget": (r) => `Its expected charge of ${credits(num(r, "expectedCharge"))} is over its budget of ${credits(num(r, "budget"))}.`,
  "continuous-bid": (r) =>
    `Bidding ${credits(num(r, "bidPerSecond"))} a second (a budget of ${credits(num(r, "budget"))} over ${seconds(num(r, "intervalSeconds"))}) against ` +
    `${credits(num(r, "hostBidsPerSecond"))} a second of other bids: a ${number((num(r, "share") ?? 0) * 100, 0)}% share, expected to cost ${credits(num(r, "expectedCharge"))}.`,
  rebid: (r) => `Bids recomputed from progress (${number((num(r, "progressBefore") ?? 0) * 100, 0)}% to ${number((num(r, "progressAfter") ?? 0) * 100, 0)}%).`,
  reservation: (r) =>
    `Reserved ${number((num(r, "fraction") ?? 0) * 100, 1)}% of the market's compute (${number((num(r, "reservedFraction") ?? 0) * 100, 1)}% reserved in all, ` +
    `${number((num(r, "bookableFraction") ?? 0) * 100, 1)}% bookable).`,
  "reservations-full": (r) =>
    `Its reservation of ${number((num(r, "fraction") ?? 0) * 100, 1)}% does not fit: ${number((num(r, "reservedFraction") ?? 0) * 100, 1)}% is reserved of ` +
    `${number((num(r, "bookableFraction") ?? 0) * 100, 1)}% bookable.`,
  "reservation-unplaceable": (r) =>
    `No machine has room for ${whichTask(str(r, "taskId"))} at ${number(num(r, "ratePerSecond"), 3)} work a second (the largest spare is ${number(num(r, "largestSpare"), 3)}).`,
  "charged-price": (r) => `Charged the posted price of ${credits(num(r, "price"))} (the benefit at completion was ${credits(num(r, "benefit"))}).`,
  "always-admit": (r) =>
    `Admitted outright: the benefit of ${credits(num(r, "benefit"))} exceeds the highest cost the market can charge (${credits(num(r, "highestPossibleCost"))}).`,
  "no-admission-control": (r) => `The ${str(r, "policy") ?? "current"} policy admits every job (marginal cost ${credits(num(r, "marginalCost"))}).`,
  "no-feasible-machine": (r) =>
    `No machine can run ${whichTask(str(r, "taskId"))}${num(r, "deadlineAt") != null ? ` by ${instant(num(r, "deadlineAt"))}` : ""}` +
    `${exclusions(r.exclusions)}${r.linkFull === true ? "; the market's network link is full" : ""}.`,
  "no-machines": () => "There are no machines in the market right now.",
  "needs-more-machines": (r) => {
    const replicas = num(r, "replicas");
    const owners = num(r, "ownersConnected") ?? num(r, "machinesConnected");
    const missing = replicas != null && owners != null ? replicas - owners : null;
    return (
      `Each task runs as ${replicas ?? "several"} copies, each on a machine of a different owner so that the copies verify each other, ` +
      `and ${plural(owners, "owner has", "owners have")} machines connected: the job waits for machines of ${plural(missing, "more owner", "more owners")}.`
    );
  },
  "needs-another-machine": (r) =>
    `Copy ${num(r, "copy") ?? "?"} of task ${num(r, "taskIndex") ?? "?"} needs a machine of another owner than ${holders(r.copiesOnMachines)}; ` +
    `${plural(num(r, "machinesConnected"), "machine", "machines")} of ${plural(num(r, "ownersConnected"), "owner", "owners")} connected. It runs as soon as a machine of another owner connects.`,
  "cannot-become-profitable": (r) =>
    `It can never pay off: even at the earliest completion (${instant(num(r, "earliestCompletionAt"))}) the benefit of ${credits(num(r, "benefitAtEarliest"))} is below the lowest possible cost of ${credits(num(r, "lowestPossibleCost"))}.`,
  "max-wait-exceeded": (r) => `It waited ${seconds(num(r, "waitedSeconds"))} for capacity, longer than the maximum of ${seconds(num(r, "maxDelaySeconds"))}.`,
  "waited-too-long": (r) => {
    const waited = num(r, "waitedMs");
    const max = num(r, "maxDelayMs");
    return `It waited ${seconds(waited == null ? null : waited / 1000)} for capacity, longer than the maximum of ${seconds(max == null ? null : max / 1000)}.`;
  },
  "capacity-changed": () => "The market changed while deciding; the decision was made again.",
  "pilot-tasks": (r) =>
    `Provisional: priced after ${plural(num(r, "pilots"), "pilot task", "pilot tasks")}${num(r, "atMost") != null ? `, at most ${credits(num(r, "atMost"))}` : ""}. ` +
    `The job gave no work estimate, so its first ${plural(num(r, "pilots"), "task runs", "tasks run")} as pilots of ${num(r, "tasks") ?? "?"}; ` +
    `they are priced at a provisional ${seconds(num(r, "provisionalWorkPerTask"))} of reference work each (the most a task can do within its ${seconds(num(r, "wallSeconds"))} limit), and the rest is planned from what they measure.`,
  "planned-from-pilots": (r) =>
    `The rest of the job is planned from its ${plural(num(r, "pilots"), "pilot", "pilots")}: ${seconds(num(r, "measuredWorkPerTask"))} of reference work per task measured over ${plural(num(r, "runs"), "run", "runs")} ` +
    `(provisional estimate ${seconds(num(r, "provisionalWorkPerTask"))}).`,
  "remainder-rejected": (r) =>
    `Only the ${plural(num(r, "pilots"), "pilot", "pilots")} ran: the rest of the job was not admitted, so it was settled for the pilots alone (${credits(num(r, "paidToProducers"))} paid to producers).`,
  // The service's own codes in the decision log (market-manager ops/decision-codes.ts).
  "machine-left": () => "The machine left the market: its producer stopped it.",
  "missed-heartbeats": () => "The machine stopped answering: it missed its heartbeats for the lease timeout, so the market took it out.",
  "contract-ended": () => "The machine's dedicated contract ended, so it left the market.",
  "placed-again": () => "Placed again: the tasks had lost their machine (it left, their lease expired or a run failed).",
  rebalance: (r) => `Moved to lower the cost from ${number(num(r, "costBefore"))} to ${number(num(r, "costAfter"))}.`,
  "load-balance": (r) => `Moved to balance load (${number(num(r, "loadBefore"))} to ${number(num(r, "loadAfter"))}).`,
  "idle-take": (r) =>
    str(r, "why") === "holder-may-not-run"
      ? "Taken by an idle machine: the machine it waited on may not run it, because its owner ran another copy of the task."
      : str(r, "why") === "dearer"
        ? `Left where it was: the idle machine asks ${credits(num(r, "takerAsk"))} per reference second of work, more than the ${credits(num(r, "holderAsk"))} of the machine it waits on.`
        : `Taken by an idle machine that asks no more (${credits(num(r, "takerAsk"))} per reference second of work) than the one it waited on (${credits(num(r, "holderAsk"))}).`,
  "memory-ushering": (r) => `Moved for memory: ${number(num(r, "memoryUsedMb"), 0)} of ${number(num(r, "memoryMaxMb"), 0)} MB in use.`,
  "offer-accepted": (r) => `The offer of ${credits(num(r, "contractPrice"))} is accepted: the capacity is worth ${credits(num(r, "value"))} to the market.`,
  "offer-too-expensive": (r) => `The offer of ${credits(num(r, "contractPrice"))} is refused: the capacity is worth only ${credits(num(r, "value"))} to the market.`,
  "offer-expired": () => "The offer ends before it could be used.",
  "offer-unaffordable": (r) =>
    `The offer of ${credits(num(r, "contractPrice"))} is refused: the market can commit only ${credits(num(r, "budget"))} more to dedicated contracts from its reserve and earnings.`,
  "already-verified": () => "Your email address is already confirmed.",
  "too-many-signups": (r) =>
    `Too many sign-ups from this ${str(r, "scope") ?? "address"}: at most ${number(num(r, "limit"), 0)} every ${number(num(r, "windowMinutes"), 0)} minutes.`,
  "offer-too-long": (r) => `A dedicated offer may last at most ${number(num(r, "maxDays"), 0)} days; this one lasts ${number(num(r, "days"), 1)}.`,
  "escrow-exhausted": (r) =>
    `The job stopped: its producers were paid ${credits(num(r, "paidToProducers"))} for their time, all of the ${credits(num(r, "escrow"))} held for it. ` +
    "Its tasks take far longer than their work estimate; submit it again with a larger estimate or benefit.",
  "charged-benefit": (r) => `Charged the benefit at completion, ${credits(num(r, "benefit"))}.`,
  "charged-measured-work": (r) =>
    `The tasks' measured work was over the estimate's tolerance: charged ${credits(num(r, "charge"))} for it instead of the quoted ${credits(num(r, "price"))} ` +
    `(never more than the ${credits(num(r, "maxSpend"))} you allowed).`,
  "lateness-relief": (r) =>
    `The job finished late: ${credits((num(r, "fromLateProducers") ?? 0) + (num(r, "fromMarketDowntime") ?? 0))} came off the charge, ` +
    `${credits(num(r, "fromLateProducers"))} from the producers who were late and ${credits(num(r, "fromMarketDowntime"))} from the market for its own downtime.`,
  "lateness-unfunded": (r) =>
    `The job finished later than its benefit allowed by ${credits(num(r, "owed"))}, but no late producer or downtime of the market's caused it, so the quote stands for that part.`,
  "lateness-consumers-own": (r) =>
    `No relief for lateness (${credits(num(r, "owed"))}): the tasks' measured work was over the declared estimate, so the lateness was the job's own.`,
  "offer-refused": (r) => {
    const why = str(r, "why");
    const price = num(r, "contractPrice");
    const value = num(r, "value");
    if (price != null && value != null) return `The market does not buy this machine's time: the offer of ${credits(price)} is more than the ${credits(value)} the capacity is worth to it.`;
    const inner = why && why !== "offer-refused" && hasWords(why) ? ` ${describeReason({ ...r, code: why })}` : "";
    return `The market does not buy this machine's time at that price.${inner}`;
  },
  "offer-in-the-past": () => "The offer ends before now: a dedicated machine must stay for some time.",
  "incomplete-offer": () => "A dedicated machine must say when it leaves and what the whole contract costs.",
  "insufficient-credits": (r) => {
    const balance = num(r, "balance");
    const needed = num(r, "needed");
    const account = str(r, "account");
    if (account === "market") {
      return `The market's reserve cannot cover ${credits(needed)}: its account holds ${credits(balance)} and may go no lower than ${credits(num(r, "floor"))}. Raise the reserve in the settings first.`;
    }
    if (account === "producer") return `Your producer earnings are ${credits(balance)}: less than the ${credits(needed)} asked to move.`;
    const price = num(r, "price");
    const missing = num(r, "missing") ?? (balance != null && needed != null ? Math.max(0, needed - balance) : null);
    const cost = price != null ? `It would cost ${credits(price)}, and while it runs the market holds ${credits(needed)} of your balance in escrow (the price and a contingency for runs that take longer, at most the highest benefit)` : `The job needs ${credits(needed)} in escrow while it runs`;
    const have = balance != null ? `; your balance is ${credits(balance)}${missing != null ? `, so ${credits(missing)} is missing` : ""}` : "";
    return `${cost}${have}. Lower the benefit curve, move your producer earnings to your balance, or wait for running jobs to settle.`;
  },
  "no-earnings-to-move": () => "You have no producer earnings to move.",
  "not-a-consumer": (r) => `${str(r, "email") ?? "This user"} is not a consumer: only consumers spend credits.`,
  "job-finished": (r) => `This job is already ${str(r, "status") ?? "finished"}; there is nothing to cancel.`,
  "no-quorum": () => "The replicas' outputs did not agree: no output hash reached a majority.",

  "implausible-speed": (r) => `A benchmark speed of ${number(num(r, "speed"))} is not believable (the range is ${number(num(r, "min"))} to ${number(num(r, "max"))}).`,
  "negative-price": () => "A price cannot be negative.",
  "stale-lease": () => "The result came for a lease that is no longer current (it expired or was reassigned), so it was not accepted.",
  "machine-departed": () => "This machine is no longer in the market; start producing again to register anew.",
  "register-elsewhere": (r) => `This machine registers with the Market Manager ${str(r, "managerId") ?? "named"} instead, which has more room.`,
  "not-your-machine": () => "That machine belongs to someone else.",
  "hash-mismatch": () => "The reported output hash does not match the output.",
  "output-too-large": (r) => `The task's output is over the limit (${number(num(r, "bytes"), 0)} bytes, at most ${number(num(r, "max"), 0)}).`,
  "no-output": (r) => `Task ${num(r, "index") ?? "?"} has no accepted output yet.`,
  "not-found": (r) => `No such ${str(r, "what") ?? "thing"}, or it is not yours.`,
  "bad-example-params": () => "The example's parameters are not valid.",
  "task-failed": (r) => {
    const cause = str(r, "cause");
    if (cause === "failure-limit") return `The job stopped at its limit of tasks whose failure machines of other owners reproduced (the last was task ${num(r, "taskIndex") ?? "?"}): see the failed runs below.`;
    const why = cause ? failureWords(cause) : num(r, "exitCode") ? `the program exited with code ${num(r, "exitCode")}` : "it failed";
    return `Task ${num(r, "taskIndex") ?? "?"} failed ${num(r, "attempts") ?? "several"} times: ${why}.`;
  },
};

/** Whether a code has words of its own (the rest fall back to the code and its numbers). */
export function hasWords(code: string): boolean {
  return Object.hasOwn(DESCRIBE, code) || Object.hasOwn(MODULE_REFUSALS, code) || Object.hasOwn(SANDBOX_FAILURES, code);
}

/** One clear sentence for a reason; a code from outside the vocabulary falls back to the code and its numbers. */
export function describeReason(reason: Reason): string {
  const known = Object.hasOwn(DESCRIBE, reason.code) ? DESCRIBE[reason.code as MarketReasonCode] : undefined;
  if (known) return known(reason);
  // A module refusal as the sandbox names it (the worker's own checks, before any upload).
  const moduleRefusal = Object.hasOwn(MODULE_REFUSALS, reason.code) ? MODULE_REFUSALS[reason.code as keyof typeof MODULE_REFUSALS] : undefined;
  if (moduleRefusal) return moduleRefusal(reason);
  const sandbox = Object.hasOwn(SANDBOX_FAILURES, reason.code) ? SANDBOX_FAILURES[reason.code as SandboxFailure] : undefined;
  if (sandbox) return `${sandbox[0]!.toUpperCase()}${sandbox.slice(1)}.`;
  const details = Object.entries(reason)
    .filter(([k, v]) => k !== "code" && (typeof v === "number" || typeof v === "string" || typeof v === "boolean"))
    .map(([k, v]) => `${k} ${typeof v === "number" ? number(v, 4) : String(v)}`);
  return `${reason.code}${details.length ? ` (${details.join(", ")})` : ""}.`;
}

export function isReason(value: unknown): value is Reason {
  return typeof value === "object" && value !== null && typeof (value as { code?: unknown }).code === "string";
}

/** The reasons of a stored decision, whatever shape it arrived in. */
export function reasonsOf(decision: unknown): Reason[] {
  if (typeof decision !== "object" || decision === null) return [];
  const reasons = (decision as { reasons?: unknown }).reasons;
  return Array.isArray(reasons) ? reasons.filter(isReason) : [];
}

const TRPC_CODES: Record<string, string> = {
  UNAUTHORIZED: "Sign in first.",
  FORBIDDEN: "You are not allowed to do that.",
  NOT_FOUND: "Not found.",
  PAYLOAD_TOO_LARGE: "That is too large to send.",
  TOO_MANY_REQUESTS: "Too many requests; wait a moment.",
  INTERNAL_SERVER_ERROR: "The market hit an internal error; try again.",
};

/** Any error from the API (or the network) as sentences for a person. */
export function describeError(error: unknown): string {
  const data = (error as { data?: { reason?: unknown; zodIssues?: unknown; code?: string } } | null)?.data;
  if (data && isReason(data.reason)) return describeReason(data.reason);
  if (data && Array.isArray(data.zodIssues) && data.zodIssues.length > 0) {
    return (data.zodIssues as { path?: string[]; message?: string }[])
      .map((i) => `${fieldName(i.path ?? [])}${i.message ?? "is not valid"}`)
      .join(" ");
  }
  const message = error instanceof Error ? error.message : String(error);
  // A transport failure's text is the library's, not the market's: it never reaches a person.
  if (isOutage(error)) return OUTAGE_WORDS;
  if (data?.code && message === data.code) return TRPC_CODES[data.code] ?? message;
  return message || (data?.code ? (TRPC_CODES[data.code] ?? data.code) : "Something went wrong.");
}

/** "Benefit › deadline: " for an issue path, so a message says which field it is about. */
export function fieldName(path: (string | number)[]): string {
  const parts = path.filter((p) => p !== "source").map(String);
  if (parts.length === 0) return "";
  return `${parts.join(" › ")}: `;
}

/** tRPC's error code, for pages that show a sign-in prompt or a role message instead. */
export function errorCode(error: unknown): string | null {
  const code = (error as { data?: { code?: unknown } } | null)?.data?.code;
  return typeof code === "string" ? code : null;
}

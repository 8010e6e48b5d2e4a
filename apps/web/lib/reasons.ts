// Reasons are data (a code and the numbers behind it); this is the one place they become words.
// Every page renders decisions, refusals and failures through describeReason.
// The table of sentences is keyed by the market's vocabulary (MarketReasonCode, from the engine
// package) and each sentence is given its code's fields as the vocabulary types them: a code
// without a sentence, or a field renamed on one side only, does not compile.
import { credits, dateTime, number, seconds } from "./format";
import { jobReasonWords, shortId } from "@cyclemarket/client/job-file";
import type { ModuleRefusal } from "@cyclemarket/worker-runtime";
import { OUTAGE_WORDS, isOutage } from "./outage";
import {
  Exclusions,
  IDLE_TAKE_SLACK,
  MarketReason,
  ModuleReason,
  SandboxFailure,
  type LimitName,
  type MarketReasonCode,
  type MarketReasonOf,
  type OfferRefusal,
  type RunFailure,
} from "@cyclemarket/costbenefit";

export type { MarketReason };

/** A sentence for each code of the vocabulary, given that code's fields. */
type Sentences = { [C in MarketReasonCode]: (r: MarketReasonOf<C>) => string };

const EXCLUSION_WORDS: Record<Exclude<keyof Exclusions, "inspected">, string> = {
  unavailable: "switched off by their producers (paused, outside their schedule, or in use)",
  memory: "too little memory",
  reputation: "too low a reputation",
  replica: "already given another copy of the task",
  departure: "leaving too soon",
  deadline: "unable to finish in time",
  horizon: "booked beyond the planning horizon",
  memoryFull: "with their memory in use",
};

function exclusions(counts: Exclusions): string {
  const parts = (Object.keys(EXCLUSION_WORDS) as (keyof typeof EXCLUSION_WORDS)[]).filter((k) => counts[k] > 0).map((k) => `${counts[k]} ${EXCLUSION_WORDS[k]}`);
  return parts.length ? ` (${parts.join(", ")})` : "";
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const listed = (xs: number[]) => (xs.length <= 1 ? String(xs[0] ?? "?") : `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`);

/** The engine names copy r >= 1 of task t `${t}~${r}`; task ids mean nothing to a consumer. */
function whichTask(taskId: string): string {
  const copy = /~(\d+)$/.exec(taskId);
  return copy ? `copy ${Number(copy[1]) + 1} of a task` : "one of the tasks";
}

/** "the one that ran copy 1", "the ones running copies 1 and 2": the machines a waiting copy may not use. */
function holders(copies: MarketReasonOf<"needs-another-machine">["copiesOnMachines"]): string {
  const numbers = copies.map((c) => c.copy);
  const running = copies.every((c) => c.state === "leased");
  const ran = copies.every((c) => c.state !== "leased");
  const one = copies.length === 1;
  const verb = ran ? "that ran" : running ? "running" : "that ran or are running";
  return `the ${one ? "one" : "ones"} ${verb} ${one ? "copy" : "copies"} ${listed(numbers)}`;
}

/** Module refusals by the sandbox's own code (its fields as the sandbox gives them); the market sends them as `module-<code>`. */
const MODULE_REFUSALS: { [C in ModuleRefusal["code"]]: (r: Omit<Extract<ModuleRefusal, { code: C }>, "code">) => string } = {
  "too-large": (r) => `The module is over the size limit: ${number(r.bytes, 0)} bytes, the limit is ${number(r.maxBytes, 0)}.`,
  "not-wasm": () => "The file is not a WebAssembly module (it does not start with the WebAssembly header).",
  "invalid-wasm": (r) => `The file is not valid WebAssembly${r.detail ? `: ${r.detail}` : ""}.`,
  "forbidden-import": (r) => `The module imports ${r.module}.${r.name}, which the sandbox does not allow: only WASI preview 1 calls are served.`,
  "no-start": () => "The module has no _start function: it must be a WASI command.",
  "bad-start-signature": (r) => `The module's _start must take and return nothing (it takes ${r.params} and returns ${r.results}).`,
  "no-memory": () => "The module does not export its memory.",
  "unsupported-memory": (r) => `The module's memory is not supported (${r.feature}).`,
  "memory-too-large": (r) => `The module starts with ${r.initialPages} pages of memory; the limit is ${r.maxMemoryPages} pages.`,
};

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
export function failureWords(code: RunFailure): string {
  const exit = /^exit:(-?\d+)$/.exec(code);
  return exit ? `the program exited with code ${exit[1]}` : SANDBOX_FAILURES[code as SandboxFailure];
}

/** The market's limits (the README's table), as a person would name them. */
const LIMIT_WORDS: Record<LimitName, string> = {
  "quotes-per-minute": "quotes a minute",
  "submissions-per-minute": "job submissions a minute",
  "queued-tasks-per-user": "tasks of yours waiting in the market",
  "streams-per-machine": "live connections for one machine",
  "streams-per-user": "live connections for one user",
  "calls-per-batch": "calls in one request",
  "sign-ins-per-minute": "sign-in attempts a minute from this address",
  "sign-ups-per-minute": "sign-ups a minute from this address",
  "password-changes-per-minute": "password changes a minute from this address",
  "verification-emails-per-minute": "confirmation emails a minute from this address",
  "password-resets-per-minute": "password reset requests a minute from this address",
  "auth-requests-per-minute": "account requests a minute from this address",
  "auth-body-bytes": "bytes in one account request",
};
const limitWords = (limit: LimitName) => LIMIT_WORDS[limit];

const percent = (fraction: number, digits: number) => number(fraction * 100, digits);

/** The engine's refusal of a dedicated machine's offer, as its producer reads it. */
function offerRefusal(r: OfferRefusal): string {
  switch (r.code) {
    case "offer-too-expensive":
      return `The market does not buy this machine's time: the offer of ${credits(r.contractPrice)} is more than the ${credits(r.value)} the capacity is worth to it.`;
    case "offer-unaffordable":
      return `The market does not buy this machine's time at that price. ${DESCRIBE["offer-unaffordable"](r)}`;
    case "offer-expired":
      return `The market does not buy this machine's time at that price. ${DESCRIBE["offer-expired"](r)}`;
    case "offer-over-standing":
      return `The market does not buy this machine's time yet. ${DESCRIBE["offer-over-standing"](r)}`;
  }
}

const DESCRIBE: Sentences = {
  "file-name-refused": jobReasonWords,
  "input-file-name-refused": jobReasonWords,
  "too-many-files": jobReasonWords,
  "too-many-env": jobReasonWords,
  "stdin-too-large": jobReasonWords,
  "task-files-too-large": jobReasonWords,
  "job-input-too-large": jobReasonWords,
  "not-base64": jobReasonWords,
  "input-file-missing": jobReasonWords,
  "no-lines": jobReasonWords,
  "too-many-lines": jobReasonWords,
  "module-too-large": jobReasonWords,
  "module-unknown": jobReasonWords,
  "module-not-wasm": MODULE_REFUSALS["not-wasm"],
  "module-invalid-wasm": MODULE_REFUSALS["invalid-wasm"],
  "module-forbidden-import": MODULE_REFUSALS["forbidden-import"],
  "module-no-start": MODULE_REFUSALS["no-start"],
  "module-bad-start-signature": MODULE_REFUSALS["bad-start-signature"],
  "module-no-memory": MODULE_REFUSALS["no-memory"],
  "module-unsupported-memory": MODULE_REFUSALS["unsupported-memory"],
  "module-memory-too-large": MODULE_REFUSALS["memory-too-large"],
  "token-scope": jobReasonWords,
  "token-cannot-mint": jobReasonWords,
  "scope-needs-role": jobReasonWords,
  "request-too-large": jobReasonWords,
  "invalid-input": (r) => r.issues.map((i) => `${fieldName(i.path)}${i.message}`).join(" ") || "Something in the request is not valid.",
  "database-unavailable": () => "The market's database cannot be reached right now; the page reconnects by itself.",
  "internal-error": (r) => `The market could not complete this request; try again. If it keeps failing, quote request ${r.requestId ?? "(unknown)"} to the admin.`,
  "limit-reached": (r) => `You reached a limit: at most ${number(r.max, 0)} ${limitWords(r.limit)}.${r.retryAfterSeconds ? ` Try again in ${seconds(r.retryAfterSeconds)}.` : ""}`,
  "market-busy": (r) => `The market is busy right now (over ${number(r.max, 0)} calls waiting); try again in ${seconds(r.retryAfterSeconds)}.`,
  "client-gone": () => "The request was closed before the market reached it; nothing was done.",
  "batch-too-large": (r) => `One request may carry at most ${number(r.max, 0)} calls.`,
  "body-too-large": (r) => `That is too large to send: at most ${number(r.max, 0)} ${limitWords(r.limit)}.`,
  profitable: (r) => `Worth running: the benefit of ${credits(r.benefit)} beats the marginal cost of ${credits(r.marginalCost)}, completing at ${dateTime(r.completionAt)}.`,
  unprofitable: (r) =>
    `Not worth running now: the benefit of ${credits(r.benefit)} does not cover the marginal cost of ${credits(r.marginalCost)}` +
    ` (best completion at ${dateTime(r.completionAt)})` +
    (r.benefitNeeded != null ? `. A benefit above ${credits(r.benefitNeeded)} at that completion would be admitted now.` : "."),
  // The share policies (the Millennium paper, 001, 002, 004): the terms the job was given and what they bought.
  tickets: (r) =>
    `Admitted with ${number(r.tickets, 2)} tickets (its share of the market's slots); ${plural(r.freeSlots, "slot is", "slots are")} free, ` +
    `${number(r.usagePerTicket, 3)} seconds of use per ticket so far.`,
  "waiting-for-slot": (r) => `Waiting for a free slot: ${plural(r.freeSlots, "slot is", "slots are")} free and ${plural(r.jobsAhead, "job is", "jobs are")} ahead of it.`,
  "over-p-max": (r) => `${whichTask(r.taskId)} ran ${seconds(r.runSeconds)}, past the longest a task may run under this policy (${seconds(r.pMaxSeconds)}), and was stopped.`,
  "least-usage-per-ticket": (r) => `Its turn: the job with the least use per ticket (${number(r.usagePerTicket, 3)} s per ticket) gets the next free slot.`,
  "opportunity-cost": (r) =>
    `Admitted at ${credits(r.ratePerMinute)} a minute against a machine price of ${credits(r.nodePricePerMinute)} a minute: ` +
    `a ${percent(r.share, 0)}% share, expected to cost ${credits(r.expectedCharge)}.`,
  "over-budget": (r) => `Its expected charge of ${credits(r.expectedCharge)} is over its budget of ${credits(r.budget)}.`,
  "continuous-bid": (r) =>
    `Bidding ${credits(r.bidPerSecond)} a second (a budget of ${credits(r.budget)} over ${seconds(r.intervalSeconds)}) against ` +
    `${credits(r.hostBidsPerSecond)} a second of other bids: a ${percent(r.share, 0)}% share, expected to cost ${credits(r.expectedCharge)}.`,
  rebid: (r) => `Bids recomputed from progress (${percent(r.progressBefore, 0)}% to ${percent(r.progressAfter, 0)}%).`,
  reservation: (r) => `Reserved ${percent(r.fraction, 1)}% of the market's compute (${percent(r.reservedFraction, 1)}% reserved in all, ${percent(r.bookableFraction, 1)}% bookable).`,
  "reservations-full": (r) => `Its reservation of ${percent(r.fraction, 1)}% does not fit: ${percent(r.reservedFraction, 1)}% is reserved of ${percent(r.bookableFraction, 1)}% bookable.`,
  "reservation-unplaceable": (r) =>
    `No machine has room for ${whichTask(r.taskId)} at ${number(r.ratePerSecond, 3)} work a second (the largest spare is ${number(r.largestSpare, 3)}).`,
  "charged-price": (r) => `Charged the posted price of ${credits(r.price)} (the benefit at completion was ${credits(r.benefit)}).`,
  "charged-share": (r) => {
    const ended = r.failed > 0 ? `${plural(r.done, "task", "tasks")} done and ${r.failed} whose run failed (unconfirmed, but its failure is an answer too), of ${r.tasks}` : `${plural(r.done, "task", "tasks")} of ${r.tasks} done`;
    return r.price === 0
      ? `Charged the ${credits(r.paid)} its producers were paid for the ${plural(r.done, "task", "tasks")} of ${r.tasks} done: it had no agreed price for the rest.`
      : r.paid > r.share
        ? `Charged the ${credits(r.paid)} its producers were paid, more than the quote's share for the ${ended} (${credits(r.share)} of ${credits(r.price)}).`
        : `Charged the quote's share for the ${ended}: ${credits(r.share)} of ${credits(r.price)}.`;
  },
  "always-admit": (r) => `Worth running at any price: the benefit of ${credits(r.benefit)} exceeds the highest cost the market can charge (${credits(r.highestPossibleCost)}).`,
  "no-admission-control": (r) => `The ${r.policy} policy admits every job (marginal cost ${credits(r.marginalCost)}).`,
  "no-feasible-machine": (r) =>
    `No machine can run ${whichTask(r.taskId)}${r.deadlineAt != null ? ` by ${dateTime(r.deadlineAt)}` : ""}` +
    `${exclusions(r.exclusions)}${r.linkFull ? "; the market's network link is full" : ""}.`,
  "no-machines": () => "There are no machines in the market right now.",
  "needs-more-machines": (r) =>
    `Each task runs as ${r.replicas} copies, each on a machine of a different owner so that the copies verify each other, ` +
    `and ${plural(r.ownersConnected, "owner has", "owners have")} machines connected: the job waits for machines of ${plural(r.replicas - r.ownersConnected, "more owner", "more owners")}.`,
  "needs-another-machine": (r) =>
    `Copy ${r.copy} of task ${r.taskIndex} needs a machine of another owner than ${holders(r.copiesOnMachines)}; ` +
    `${plural(r.machinesConnected, "machine", "machines")} of ${plural(r.ownersConnected, "owner", "owners")} connected. It runs as soon as a machine of another owner connects.`,
  "budget-short": (r) =>
    `${plural(r.tasks, "task waits", "tasks wait")} for a machine that asks less: the cheapest of the ${plural(r.machinesConnected, "machine", "machines")} connected ` +
    `asks ${credits(r.cheapestPiece)} for a task, more than the ${credits(r.left)} the job's price has left for its tasks. The market pays producers no more than the job is charged, ` +
    `so the task runs when a machine that asks less connects; you are charged no more than the quote.`,
  "cannot-become-profitable": (r) =>
    `It can never pay off: even at the earliest completion (${dateTime(r.earliestCompletionAt)}) the benefit of ${credits(r.benefitAtEarliest)} is below the lowest possible cost of ${credits(r.lowestPossibleCost)}.`,
  "max-wait-exceeded": (r) => `It waited ${seconds(r.waitedSeconds)} for capacity, longer than the maximum of ${seconds(r.maxDelaySeconds)}.`,
  "waited-too-long": (r) => `It waited ${seconds(r.waitedMs / 1000)} for capacity, longer than the maximum of ${seconds(r.maxDelayMs / 1000)}.`,
  "capacity-changed": () => "The market changed while deciding; the decision was made again.",
  "pilot-tasks": (r) =>
    `Provisional: priced after ${plural(r.pilots, "pilot task", "pilot tasks")}${r.atMost != null ? `, at most ${credits(r.atMost)}` : ""}. ` +
    `The job gave no work estimate, so its first ${plural(r.pilots, "task runs", "tasks run")} as pilots of ${r.tasks}; ` +
    `they are priced at a provisional ${seconds(r.provisionalWorkPerTask)} of reference work each (the most a task can do within its ${seconds(r.wallSeconds)} limit), and the rest is planned from what they measure.`,
  "planned-from-pilots": (r) =>
    `The rest of the job is planned from its ${plural(r.pilots, "pilot", "pilots")}: ${seconds(r.measuredWorkPerTask)} of reference work per task measured over ${plural(r.runs, "run", "runs")} ` +
    `(provisional estimate ${seconds(r.provisionalWorkPerTask)}).`,
  "remainder-rejected": (r) =>
    `Only the ${plural(r.pilots, "pilot", "pilots")} ran: the rest of the job was not admitted, so it was settled for the pilots alone (${credits(r.paidToProducers)} paid to producers).`,
  // The service's own codes in the decision log (market-manager ops/decision-codes.ts).
  "machine-left": () => "The machine left the market: its producer stopped it.",
  "missed-leases": () => "The machine kept taking tasks and letting their leases lapse without a result, so the market took it out and placed its tasks elsewhere.",
  "missed-heartbeats": () => "The machine stopped answering: it missed its heartbeats for the lease timeout, so the market took it out.",
  "contract-ended": () => "The machine's dedicated contract ended, so it left the market.",
  "manager-gone": () => "The Market Manager this machine was offered to stopped, and the machine was offered to other managers too: its row there left the market and its tasks were placed again.",
  // Every task waiting for a machine is placed this way (resources/machines.ts placePendingTasks), not only lost ones.
  "placed-again": () =>
    "Placed on a machine: the tasks were waiting for one (a copy that checks another account's result, or a task whose machine left, whose lease expired or whose run failed).",
  rebalance: (r) => `Moved to lower the cost from ${number(r.costBefore)} to ${number(r.costAfter)}.`,
  "load-balance": (r) => `Moved to balance load (${number(r.loadBefore)} to ${number(r.loadAfter)}).`,
  "idle-take": (r) =>
    r.why === "holder-may-not-run"
      ? "Taken by an idle machine: the machine it waited on may not run it, because its owner ran another copy of the task."
      : r.why === "dearer"
        ? `Left where it was: the idle machine asks ${credits(r.takerAsk)} per reference second of work, more than ${IDLE_TAKE_SLACK * 100}% above the ${credits(r.holderAsk)} of the machine it waits on.`
        : // The taker may ask a little more than the holder (IDLE_TAKE_SLACK): "no more than" would be false then.
          `Taken by an idle machine that asks ${credits(r.takerAsk)} per reference second of work, at most ${IDLE_TAKE_SLACK * 100}% more than the ${credits(r.holderAsk)} of the machine it waited on.`,
  "memory-ushering": (r) => `Moved for memory: ${number(r.memoryUsedMb, 0)} of ${number(r.memoryMaxMb, 0)} MB in use.`,
  "offer-accepted": (r) => `The offer of ${credits(r.contractPrice)} is accepted: the capacity is worth ${credits(r.value)} to the market.`,
  "offer-too-expensive": (r) => `The offer of ${credits(r.contractPrice)} is refused: the capacity is worth only ${credits(r.value)} to the market.`,
  "offer-expired": () => "The offer ends before it could be used.",
  "offer-over-standing": (r) =>
    `The offer of ${credits(r.contractPrice)} is refused: the market may promise this account at most ${credits(r.ceiling)} in contracts at once (its contracts still owe ${credits(r.promised)}); confirming your address and results the market accepts raise it.`,
  "offer-unaffordable": (r) =>
    `The offer of ${credits(r.contractPrice)} is refused: the market can commit only ${credits(r.budget)} more to dedicated contracts from its reserve and earnings.`,
  "already-verified": () => "Your email address is already confirmed.",
  "too-many-signups": (r) => `Too many sign-ups from this ${r.scope}: at most ${number(r.limit, 0)} every ${number(r.windowMinutes, 0)} minutes.`,
  "offer-too-long": (r) => `A dedicated offer may last at most ${number(r.maxDays, 0)} days; this one lasts ${number(r.days, 1)}.`,
  "escrow-exhausted": (r) =>
    `The job stopped: its producers were paid ${credits(r.paidToProducers)} for their time, all of the ${credits(r.escrow)} held for it. ` +
    "Its tasks take far longer than their work estimate; submit it again with a larger estimate or benefit.",
  "charged-benefit": (r) => `Charged the benefit at completion, ${credits(r.benefit)}.`,
  "charged-measured-work": (r) =>
    `The tasks' measured work was over the estimate's tolerance: charged ${credits(r.charge)} for it instead of the quoted ${credits(r.price)} ` +
    `(never more than the ${credits(r.maxSpend)} you allowed).`,
  "lateness-relief": (r) =>
    `The job finished late: ${credits(r.fromLateProducers + r.fromMarketDowntime)} came off the charge, ` +
    `${credits(r.fromLateProducers)} from the producers who were late and ${credits(r.fromMarketDowntime)} from the market for its own downtime.`,
  "lateness-unfunded": (r) =>
    `The job finished later than its benefit allowed by ${credits(r.owed)}, but no late producer or downtime of the market's caused it, so the quote stands for that part.`,
  "lateness-consumers-own": (r) => `No relief for lateness (${credits(r.owed)}): the tasks' measured work was over the declared estimate, so the lateness was the job's own.`,
  "offer-refused": (r) => (r.refusal ? offerRefusal(r.refusal) : "The market does not buy this machine's time at that price."),
  "offer-in-the-past": () => "The offer ends before now: a dedicated machine must stay for some time.",
  "incomplete-offer": () => "A dedicated machine must say when it leaves and what the whole contract costs.",
  "dedicated-offered-to-several": () => "A dedicated machine is offered to one Market Manager only: its contract pays for its hours, and several managers' contracts would pay the same hours more than once. Offer it as opportunistic to several.",
  "insufficient-credits": (r) => {
    if (r.account === "market") return `The market's reserve cannot cover ${credits(r.needed)}. Raise the reserve in the settings first.`;
    if (r.account === "producer") return `Your producer earnings${r.balance != null ? ` are ${credits(r.balance)}:` : " are"} less than the ${credits(r.needed)} asked to move.`;
    const missing = r.missing ?? (r.balance != null ? Math.max(0, r.needed - r.balance) : null);
    const cost =
      r.price != null
        ? `It would cost ${credits(r.price)}, and while it runs the market holds ${credits(r.needed)} of your balance in escrow (the price and a contingency for runs that take longer, at most the highest benefit)`
        : `The job needs ${credits(r.needed)} in escrow while it runs`;
    const have = r.balance != null ? `; your balance is ${credits(r.balance)}${missing != null ? `, so ${credits(missing)} is missing` : ""}` : "";
    return `${cost}${have}. Lower the benefit curve, move your producer earnings to your balance, or wait for running jobs to settle.`;
  },
  "no-earnings-to-move": () => "You have no producer earnings to move.",
  "not-a-consumer": (r) => `${r.email} is not a consumer: only consumers spend credits.`,
  "job-finished": (r) => `This job is already ${r.status}; there is nothing to cancel.`,
  "no-quorum": () => "The replicas' outputs did not agree: no output hash reached a majority.",

  "implausible-speed": (r) => `A benchmark speed of ${number(r.speed)} is not believable (the range is ${number(r.min)} to ${number(r.max)}).`,
  "negative-price": () => "A price cannot be negative.",
  "stale-lease": () => "The result came for a lease that is no longer current (it expired or was reassigned), so it was not accepted.",
  "machine-departed": () => "This machine is no longer in the market; start producing again to register anew.",
  "machine-moved": (r) => `This machine is held by the Market Manager ${r.managerId} now, to share the machines among the managers; its worker follows.`,
  "manager-not-live": (r) => `The Market Manager ${r.managerId} is not live (silent, taken over or unknown): machines can move only between live managers.`,
  "machine-already-there": (r) => `Machine ${shortId(r.machineId)} is already held by the Market Manager ${r.managerId}.`,
  "machine-dedicated": (r) => `Machine ${shortId(r.machineId)} is dedicated: its contract stays with the manager that holds it until it ends, ${dateTime(r.contractEndsAt)}.`,
  "machine-draining": (r) =>
    `Machine ${shortId(r.machineId)} is draining from ${r.fromManagerId} to ${r.toManagerId}: it takes no new work, and moves once its ${number(r.leases, 0)} running task${r.leases === 1 ? "" : "s"} end.`,
  "machine-drain-cancelled": (r) => `An admin cancelled machine ${shortId(r.machineId)}'s move to ${r.toManagerId}: it takes work where it is again.`,
  "machine-drain-dropped": (r) => `Machine ${shortId(r.machineId)} was to move to ${r.toManagerId}, which is no longer live: it takes work where it is again.`,
  "machine-not-draining": (r) => `Machine ${shortId(r.machineId)} is not draining here (it moved already, or no move was asked).`,
  "machine-cannot-follow": (r) => `Machine ${shortId(r.machineId)} cannot follow a move (a browser page producing through the web app): it stays with the Market Manager it joined.`,
  "machine-offered-to-several": (r) => `Machine ${shortId(r.machineId)} is offered to several Market Managers at once: each holds its own record of it, which does not move.`,
  "offered-here-already": (r) => `This machine is already offered to the Market Manager ${r.managerId}: one manager holds it once.`,
  "offered-to-every-manager": (r) => `This machine is already offered to every live Market Manager (${number(r.managers, 0)}).`,
  "machine-handed": (r) => `An admin moved this machine from the Market Manager ${r.fromManagerId} to ${r.toManagerId}; its worker follows.`,
  "register-elsewhere": (r) => `This machine registers with the Market Manager ${r.managerId} instead, which has more room.`,
  "split-part-refused": (r) =>
    `The job was split across Market Managers, and ${r.managerId} did not admit its part (tasks ${number(r.fromTask, 0)} to ${number(r.fromTask + r.tasks - 1, 0)}: ${r.outcome}); no part was kept and nothing is held.`,
  "not-your-machine": () => "That machine belongs to someone else.",
  "hash-mismatch": () => "The reported output hash does not match the output.",
  "output-too-large": (r) => `The task's output is over the limit (${number(r.bytes, 0)} bytes, at most ${number(r.max, 0)}).`,
  "no-output": (r) => `Task ${r.index} has no accepted output yet.`,
  // An account is looked up by its address (an admin's grant): "not yours" would make no sense there.
  "not-found": (r) => (r.what === "account" ? "No account has that email address." : `No such ${r.what}, or it is not yours.`),
  "bad-example-params": () => "The example's parameters are not valid.",
  "task-failed": (r) => {
    if (r.cause === "failure-limit") return `The job stopped at its limit of tasks whose failure machines of other owners reproduced (the last was task ${r.taskIndex}): see the failed runs below.`;
    const why = r.cause ? failureWords(r.cause) : r.exitCode ? `the program exited with code ${r.exitCode}` : "it failed";
    return `Task ${r.taskIndex} failed ${r.attempts} times: ${why}.`;
  },
};

/** One clear sentence for a reason of the market's vocabulary, from its typed fields. */
export function describeReason(reason: MarketReason): string {
  return (DESCRIBE[reason.code] as (r: MarketReason) => string)(reason);
}

/** The reason as the vocabulary types it, or null when it is none of its reasons (or not a reason). */
export function asReason(value: unknown): MarketReason | null {
  const checked = MarketReason.safeParse(value);
  return checked.success ? checked.data : null;
}

/**
 * Words for a reason that arrived as untyped data (a worker's event, an HTTP error's body): a reason
 * of the vocabulary in its sentence, a module refusal or a run's failure by the sandbox's own code
 * in theirs; anything else as its code and numbers.
 */
export function describeAnyReason(value: { code: string; [detail: string]: unknown }): string {
  const known = asReason(value);
  if (known) return describeReason(known);
  const module = ModuleReason.safeParse({ ...value, code: `module-${value.code}` });
  if (module.success) return describeReason(module.data);
  const sandbox = SandboxFailure.safeParse(value.code);
  if (sandbox.success) return sandboxWords(sandbox.data);
  const details = Object.entries(value)
    .filter(([k, v]) => k !== "code" && (typeof v === "number" || typeof v === "string" || typeof v === "boolean"))
    .map(([k, v]) => `${k} ${typeof v === "number" ? number(v, 4) : String(v)}`);
  return `${value.code}${details.length ? ` (${details.join(", ")})` : ""}.`;
}

/** A run's failure by the sandbox's code, as a sentence. */
export function sandboxWords(code: SandboxFailure): string {
  const words = SANDBOX_FAILURES[code];
  return `${words[0]!.toUpperCase()}${words.slice(1)}.`;
}

/** Whether a value is shaped as a reason at all (a code), before it is read as one. */
export function isReason(value: unknown): value is { code: string; [detail: string]: unknown } {
  return typeof value === "object" && value !== null && typeof (value as { code?: unknown }).code === "string";
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
  if (data && isReason(data.reason)) return describeAnyReason(data.reason);
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

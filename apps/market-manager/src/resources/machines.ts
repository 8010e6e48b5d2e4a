import { OfferRefusal, contractOverStanding, freshProof } from "@cyclemarket/costbenefit";
import type { Caller } from "../api/trpc.ts";
import { recordDecisions } from "../ops/decisions.ts";
import { DEPARTURE_CODES } from "../ops/decision-codes.ts";
import { routeRegistration } from "../market/managers.ts";
import { refuse } from "../api/errors.ts";
import type { Market } from "../market/market.ts";
import type { LiveMachine, LiveTask } from "../market/live.ts";
import { planRequeue } from "../market/requeue.ts";
import { machineJoined, machineLeaving, machineLeft, machineStayed } from "../market/transitions.ts";
import { toCredits, toMicro } from "../ledger/ledger.ts";
import { accrueContract, contractBudget, promisedContracts, provenUntil } from "./contracts.ts";
import { startProof } from "./presence.ts";
import { scheduleProbe } from "./probes.ts";
import type { Machine as MachineRow } from "../db/generated/client.ts";
import { MachineControls, readControls, type MachineControlsPatch } from "@cyclemarket/worker-runtime";
import { offerFault } from "@cyclemarket/costbenefit";
import { rowId } from "../db/row-id.ts";
import { TaskQueue } from "../market/task-queue.ts";
import { contractStandingOf, loadOwners, standingNow } from "../market/standing.ts";
import { shortId } from "@cyclemarket/client/job-file";
import { runStatement } from "../db/sql/statement.ts";
import { prepared, viaPrisma } from "../db/sql/runners.ts";
import { registerMachine as registerMachineStatement } from "../db/sql/machine-rows.ts";

export interface MachineOffer {
  name: string;
  kind: "opportunistic" | "dedicated";
  slots: number;
  speed: number;
  memoryPerSlotMb: number;
  bandwidthBytesPerSecond: number;
  pricePerSecond: number;
  userAgent: string;
  /** Dedicated machines: when the machine leaves (ms since the epoch) and the contract's price. */
  departsAt?: number | undefined;
  contractPrice?: number | undefined;
  /** The producer's controls and whether the machine's own conditions let it work now. */
  controls?: MachineControlsPatch | undefined;
  available?: boolean | undefined;
  /** The worker can follow a `register-elsewhere` answer, and the manager it names (market/managers.ts). */
  follow?: boolean | undefined;
  manager?: string | undefined;
  /** The same physical machine offered to several managers: every one of its registrations carries this key. */
  offerKey?: string | undefined;
}

/** The longest dedicated contract the market considers. */
export const MAX_CONTRACT_DAYS = 90;

/** The Resource Manager takes a machine's profile after its benchmark. */
export async function registerMachine(market: Market, caller: Caller, offer: MachineOffer, signal?: AbortSignal, network: string | null = null) {
  checkOffer(offer);
  await routeRegistration(market, caller.id, offer);
  // A dedicated offer is weighed against the market's budget for contracts and its state of the
  // moment, so it is decided in the market's step. Any other machine is accepted whatever the
  // market holds (the engine's considerOffer): its row is written without the lock and memory
  // learns of it as soon as it is committed, so registering never waits behind the market's queue.
  if (offer.kind === "dedicated") {
    return market.serial(() => joinMarket(market, caller, offer, true, network), { signal });
  }
  if (signal?.aborted) throw refuse.gone();
  return joinOpportunistic(market, caller, offer, network);
}

/** An opportunistic machine's registration, its offer checked (checkOffer): its row written, then memory told. */
export async function joinOpportunistic(market: Market, caller: Caller, offer: MachineOffer, network: string | null = null) {
  const answer = await joinMarket(market, caller, offer, false, network);
  placePendingSoon(market);
  return answer;
}

/** Refuses an offer no market takes, whatever it holds (the engine's offerFault): its reason names the limit. */
export function checkOffer(offer: MachineOffer) {
  const fault = offerFault(offer);
  if (fault === null) return;
  const message =
    fault.code === "implausible-speed"
      ? `A benchmark speed of ${fault.speed} is not believable (the range is ${fault.min} to ${fault.max} times the reference machine).`
      : fault.code === "negative-price"
        ? "A price cannot be negative."
        : fault.code === "dedicated-offered-to-several"
          ? "A dedicated machine is offered to one Market Manager only: its contract pays for its hours, and several managers' contracts would pay the same hours more than once."
          : "A dedicated machine must say when it leaves and what the whole contract costs.";
  throw refuse.badRequest(fault, message);
}

async function joinMarket(market: Market, caller: Caller, offer: MachineOffer, dedicated: boolean, network: string | null) {
  const now = market.clock.now();
  if (dedicated && offer.departsAt! <= now) {
    throw refuse.badRequest({ code: "offer-in-the-past", departsAt: offer.departsAt!, now }, "The offer ends before now; a dedicated machine must stay for some time.");
  }
  if (dedicated && offer.departsAt! - now > MAX_CONTRACT_DAYS * 86_400_000) {
    throw refuse.badRequest(
      { code: "offer-too-long", days: (offer.departsAt! - now) / 86_400_000, maxDays: MAX_CONTRACT_DAYS },
      `A dedicated offer may last at most ${MAX_CONTRACT_DAYS} days.`,
    );
  }
  const id = rowId();
  const contractPriceMicro = dedicated ? toMicro(offer.contractPrice!) : null;
  if (!market.state.owners.has(caller.id)) await loadOwners(market, [caller.id]);
  const live: LiveMachine = {
    id,
    ownerId: caller.id,
    name: offer.name,
    kind: offer.kind,
    slots: offer.slots,
    speed: offer.speed,
    benchmarkSpeed: offer.speed,
    memoryPerSlotMb: offer.memoryPerSlotMb,
    pricePerSecondMicro: dedicated ? 0n : toMicro(offer.pricePerSecond),
    network,
    reputation: standingNow(market, caller.id).score,
    contractPriceMicro,
    departsAt: dedicated ? offer.departsAt! : null,
    contractStartAt: dedicated ? now : null,
    contractPaidUntil: dedicated ? now : null,
    contractPaidMicro: 0n,
   
    unprovenExpiries: 0,
    queue: new TaskQueue(),
    leases: new Set(),
    lastHeartbeatAt: now,
    controls: MachineControls.parse(offer.controls ?? {}),
    localAvailable: offer.available ?? true,
    offerKey: offer.offerKey ?? null,
    follows: offer.follow === true,
  };
  const row = {
    id,
    ownerId: caller.id,
    apiTokenId: caller.tokenId ?? null,
    name: offer.name,
    kind: offer.kind,
    slots: offer.slots,
    speed: offer.speed,
    memoryPerSlotMb: offer.memoryPerSlotMb,
    bandwidthBps: offer.bandwidthBytesPerSecond,
    pricePerSecond: String(live.pricePerSecondMicro),
    contractPrice: contractPriceMicro === null ? null : String(contractPriceMicro),
    availableUntil: dedicated ? offer.departsAt! : null,
    contractPaidUntil: dedicated ? now : null,
    userAgent: offer.userAgent.slice(0, 300),
    now,
    controls: JSON.stringify(live.controls),
    localAvailable: live.localAvailable,
    network,
    managerId: market.managerId,
    offerKey: offer.offerKey ?? null,
    follows: offer.follow === true,
  };
  // the Java Market paper, 5.5.2: the market accepts or rejects a dedicated machine at once, by the price it
  // would itself put on that capacity right after accepting it.
  const verdict = dedicated
    ? // What contracts promise is read from every manager's rows, under a lock all of them take,
      // and the row written before it is let go: each manager's memory holds only its own
      // contracts, and an account offering a machine to each would be promised its ceiling once per manager.
      await market.db.$transaction(async (tx) => {
        const promised = await promisedContracts(tx, caller.id);
        // The account's facts as every manager recorded them: memory has them as they were when
        // this manager last read them, before another caught the account forging, say.
        await loadOwners(market, [caller.id], tx);
        live.reputation = standingNow(market, caller.id).score;
        const verdict = considered(market, live, now, await contractBudget(tx, promised.market));
        // What the market may owe this account in contracts is bounded by what it proved (the engine's contractCeiling).
        const over = contractOverStanding(offer.contractPrice!, contractStandingOf(market, caller.id), toCredits(promised.owner));
        if (over) throw refuse.conflict({ code: "offer-refused", refusal: over }, "The market does not promise this account that much in contracts yet.");
        await runStatement(viaPrisma(tx), registerMachineStatement, row);
        return verdict;
      })
    : considered(market, live, now, Infinity);
  if (!dedicated) await runStatement(prepared(market.resources.database.shared), registerMachineStatement, row);
  // Heard from the moment it is written, however long the commit took.
  live.lastHeartbeatAt = Math.max(live.lastHeartbeatAt, market.clock.now());
  // A dedicated machine is there when its contract starts; from then on it must prove it (presence.ts).
  startProof(live, now);
  if (dedicated) scheduleProbe(market, live, now);
  machineJoined(market, live);
  market.log(`machine ${offer.name} (${shortId(id)}) joined: ${offer.slots} slots at speed ${offer.speed.toFixed(2)}`);
  if (dedicated) await placePendingTasks(market);
  market.emit({ kind: "machine", machineId: id });
  // Only a worker that can follow is told where to go, and only in a market of several managers:
  // with one, the address it reached the market at (a proxy, the web app) is the right one.
  const manager = offer.follow && (market.managers?.alive().length ?? 0) > 1 ? market.managers!.self : undefined;
  return {
    machineId: id,
    offer: dedicated ? verdict.reasons : undefined,
    leaseTimeoutMs: market.settings.leaseTimeoutMs,
    heartbeatIntervalMs: heartbeatInterval(market),
    controls: live.controls,
    // Where the machine's calls and work stream go: the manager that holds it.
    ...(manager ? { managerId: manager.id, managerUrl: manager.url } : {}),
  };
}

/** The engine's answer to an offer (its considerOffer), or a refusal that says why the market does not buy it. */
function considered(market: Market, live: LiveMachine, now: number, budget: number) {
  const verdict = market.engine.considerOffer(live, now, budget);
  if (!verdict.accept) {
    const refusal = OfferRefusal.safeParse(verdict.reasons[0]);
    throw refuse.conflict({ code: "offer-refused", refusal: refusal.success ? refusal.data : null }, "The market does not buy this machine's time at that price.");
  }
  return verdict;
}

/** Markets with a placement of waiting tasks already queued: machines joining at once share one. */
const placing = new WeakSet<Market>();

/**
 * Tasks that waited for a machine (none fitted, or there were none) are offered to the machines
 * now in the market, in one step of the market however many machines join meanwhile. Only when
 * such tasks exist: the step waits for the journal to be idle, and every report, lease and
 * admission behind it waits with it, and a step at every join held the market's next decisions
 * for a large part of a fleet's joining (bench:load with machines joining over time shows it).
 */
function placePendingSoon(market: Market) {
  if (placing.has(market) || !market.state.hasPendingTasks()) return;
  placing.add(market);
  void market
    .serial(() => {
      placing.delete(market);
      return placePendingTasks(market);
    })
    .catch((e: unknown) => market.log(`waiting tasks not placed yet (the sweeper tries again): ${e instanceof Error ? e.message : String(e)}`));
}

export function heartbeatInterval(market: Market): number {
  return Math.max(500, Math.floor(market.settings.leaseTimeoutMs / 3));
}

export function liveMachineFromRow(row: MachineRow & { owner: { emailVerified: boolean } }): LiveMachine {
  return {
    id: row.id,
    ownerId: row.ownerId,
    name: row.name,
    kind: row.kind,
    slots: row.slots,
    speed: row.speed,
    benchmarkSpeed: row.benchmarkSpeed,
    memoryPerSlotMb: row.memoryPerSlotMb,
    pricePerSecondMicro: row.pricePerSecondMicro,
    network: row.network,
    // Its owner's standing score, given once the owners are read (market/standing.ts).
    reputation: 0,
    contractPriceMicro: row.contractPriceMicro,
    departsAt: row.availableUntil?.getTime() ?? null,
    contractStartAt: row.kind === "dedicated" ? row.registeredAt.getTime() : null,
    contractPaidUntil: row.contractPaidUntil?.getTime() ?? null,
    contractPaidMicro: row.contractPaidMicro,
    // What it proved before the restart was paid then; from here it proves itself again.
   
   
    unprovenExpiries: 0,
    queue: new TaskQueue(),
    leases: new Set(),
    lastHeartbeatAt: row.lastHeartbeatAt.getTime(),
    controls: readControls(row.controls),
    localAvailable: row.localAvailable,
    // A drain an admin started survives a restart of its manager (a takeover drops it: adopt.ts).
    ...(row.drainingTo ? { drainingTo: row.drainingTo } : {}),
    offerKey: row.offerKey,
    follows: row.follows,
    // Proved up to what was paid; resumeContract starts it again from the restart.
    ...(row.kind === "dedicated" ? { proof: freshProof(row.contractPaidUntil?.getTime() ?? row.registeredAt.getTime()) } : {}),
  };
}

/** The caller's own live machine, or a refusal that says why not. */
export function ownMachine(market: Market, caller: Caller, machineId: string): LiveMachine {
  const machine = market.state.machines.get(machineId);
  if (!machine) {
    // Handed to another manager (market/machine-handoff.ts): the worker's calls go there now.
    const moved = market.managers?.whereMoved(machineId);
    if (moved) throw refuse.conflict({ code: "machine-moved", machineId, ...moved }, `This machine is held by the Market Manager ${moved.managerId} now; call it at ${moved.managerUrl}.`);
    throw refuse.conflict({ code: "machine-departed", machineId }, "This machine is no longer in the market; register again.");
  }
  if (machine.ownerId !== caller.id) throw refuse.forbidden({ code: "not-your-machine", machineId }, "This machine belongs to someone else.");
  return machine;
}

/**
 * A machine leaves (it said so, or it missed heartbeats for the lease timeout): its running and
 * queued tasks go back to the engine and are placed again.
 */
export async function departMachine(market: Market, machineId: string, reason: keyof typeof DEPARTURE_CODES) {
  const machine = market.state.machines.get(machineId);
  if (!machine) return;
  const now = market.clock.now();
  const released: LiveTask[] = [];
  for (const leaseId of machine.leases) {
    const lease = market.state.leases.get(leaseId);
    const task = lease && market.state.tasks.get(lease.taskId);
    if (task) released.push(task);
  }
  for (const taskId of machine.queue) {
    const task = market.state.tasks.get(taskId);
    if (task) released.push(task);
  }
  // The engine must forget the machine before it is asked where its tasks go.
  machineLeaving(market, machineId);
  let requeue: Awaited<ReturnType<typeof planRequeue>>;
  let paid = () => {};
  try {
    requeue = await market.db.$transaction(async (tx) => {
      // A dedicated machine is paid for the presence it proved (presence.ts); the rest of its
      // contract, never delivered, is never paid.
      paid = await accrueContract(tx, machine, provenUntil(machine));
      await tx.machine.update({
        where: { id: machineId },
        data: { status: "departed", departedAt: new Date(now), departReason: reason },
      });
      // The leases memory holds are the machine's live ones (restore loads every active lease of
      // an active machine): ended by id, so no index needs to find leases by machine and status.
      await tx.lease.updateMany({
        where: { id: { in: [...machine.leases] }, status: "active" },
        data: { status: "abandoned", endedAt: new Date(now) },
      });
      await recordDecisions(market, tx, [{ outcome: "departure", at: now, machineId, userId: machine.ownerId, tasks: released.length, reasons: [{ code: DEPARTURE_CODES[reason] }] }]);
      return planRequeue(market, tx, released);
    });
  } catch (e) {
    // Nothing was recorded (the database is away, say): memory keeps the machine and its tasks,
    // as the database does, and a later tick tries again. Changing memory first stranded its
    // queued tasks on a machine nobody could lease from.
    machineStayed(market, machine, released, now);
    throw e;
  }
  paid();
  machineLeft(market, machine, released);
  requeue.apply();
  market.log(`machine ${machine.name} (${shortId(machineId)}) departed (${reason}); ${released.length} tasks placed again`);
  market.emit({ kind: "machine", machineId });
  for (const jobId of new Set(released.map((t) => t.jobId))) {
    const job = market.state.jobs.get(jobId);
    if (job) market.emit({ kind: "job", jobId, ownerId: job.ownerId });
  }
}

/** Tasks waiting for any machine at all get one as soon as the market has machines again. */
export async function placePendingTasks(market: Market) {
  const pending = market.state.pendingTasks();
  if (!pending.length || market.state.machines.size === 0) return;
  const requeue = await market.db.$transaction((tx) => planRequeue(market, tx, pending));
  requeue.apply();
}

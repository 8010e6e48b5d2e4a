// One machine offered to several Market Managers at once (the Java Market paper, section 4.4:
// several schedulers, each over a subset of the producers; the subsets may intersect). The worker
// runs one producer loop a manager on one pool of threads: each registers the machine with its
// manager under one offer key, so each manager holds a row of its own (its slots, leases, pay),
// and the loops share the slots (slot-share.ts), so together they never run more than the slots.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { runProducer, type ProducerEvent, type ProducerOptions, type ProducerSummary } from "../producer.ts";
import { SlotShare } from "../slot-share.ts";
import { createTrpcApi, liveManagersAt } from "./trpc-api.ts";
import type { WorkerApi } from "../api.ts";

/** Which managers to offer the machine to: every live one, the `count` with the most room, or those named. */
export type ManagerChoice = { all: true } | { count: number } | { ids: string[] };

const MAX_MANAGERS = 64;

/** `--managers`: "all", a count, or a comma-separated list of manager ids. */
export const ManagerChoiceFlag = z
  .string()
  .trim()
  .min(1, "--managers must be all, a number or a list of manager ids")
  .transform((text, ctx): ManagerChoice => {
    if (text === "all") return { all: true };
    if (/^\d+$/.test(text)) {
      const count = Number(text);
      if (count < 1 || count > MAX_MANAGERS) ctx.addIssue({ code: "custom", message: `--managers must be 1 to ${MAX_MANAGERS} managers` });
      return { count };
    }
    const ids = [...new Set(text.split(",").map((x) => x.trim()).filter(Boolean))];
    if (ids.length > MAX_MANAGERS) ctx.addIssue({ code: "custom", message: `--managers names at most ${MAX_MANAGERS} managers` });
    return { ids };
  });

/** The managers chosen among the live ones (the most room first), or why none can be. */
export function pickManagers<M extends { id: string }>(live: readonly M[], choice: ManagerChoice): M[] {
  if ("all" in choice) return [...live];
  if ("count" in choice) return live.slice(0, choice.count);
  const missing = choice.ids.filter((id) => !live.some((m) => m.id === id));
  if (missing.length) throw new Error(`no live Market Manager named ${missing.join(", ")} (live: ${live.map((m) => m.id).join(", ") || "none"})`);
  return choice.ids.map((id) => live.find((m) => m.id === id)!);
}

/**
 * The managers to offer the machine to now, given the live ones (the most room first) and those
 * offered to already: every live one; the `count` with the most room, keeping those offered to
 * while they live; or the named ones that are live. A manager that died is left out, one that
 * joined is taken in.
 */
export function managersWanted(live: readonly { id: string }[], choice: ManagerChoice, offered: readonly string[]): string[] {
  const ids = live.map((m) => m.id);
  if ("all" in choice) return ids;
  if ("ids" in choice) return choice.ids.filter((id) => ids.includes(id));
  const kept = offered.filter((id) => ids.includes(id)).slice(0, choice.count);
  return [...kept, ...ids.filter((id) => !kept.includes(id))].slice(0, choice.count);
}

/**
 * How often the worker asks its front door which managers are live: a manager that joined is
 * offered the machine, one that died is no longer, within this. (One small read of the managers'
 * view the front door already holds.)
 */
export const MANAGERS_CHECK_MS = 5_000;

export interface SeveralOptions extends Omit<ProducerOptions, "api" | "share" | "onEvent"> {
  url: string;
  token: string;
  choice: ManagerChoice;
  /** Each loop's events, with the manager it is for. */
  onEvent?: (managerId: string, event: ProducerEvent) => void;
  /** Told the managers chosen, before any registers, and again each time they change. */
  onManagers?: (ids: string[]) => void;
  /** How often the live managers are read again (ms, default MANAGERS_CHECK_MS). */
  checkEveryMs?: number;
}

/** Resolves after `ms`, or at once when the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Offers the machine to the managers chosen and runs until `signal` aborts: one producer loop a
 * manager, each registering with its own manager only. Every `checkEveryMs` the live managers are
 * read again from the front door: a loop is started for a manager that joined (under `all`, or
 * named, or to keep `count`), and the loop of one that is no longer live is stopped (its tasks
 * were given back with its row when another manager took it over; the machine's slots go to the
 * others). A manager that returns is offered the machine again, under the same offer key.
 */
export async function runOfferedToSeveral(options: SeveralOptions): Promise<ProducerSummary[]> {
  const { url, token, choice, onEvent, onManagers, machine, checkEveryMs = MANAGERS_CHECK_MS, ownerActivity, ...rest } = options;
  if (machine.kind === "dedicated") throw new Error("a dedicated machine is offered to one Market Manager only: its contract pays for its hours, and several would pay them more than once");
  const chosen = pickManagers(await liveManagersAt(url, token), choice);
  if (!chosen.length) throw new Error("the market has no live Market Manager to offer this machine to");
  onManagers?.(chosen.map((m) => m.id));
  const share = new SlotShare();
  const offerKey = randomUUID();
  // One watcher of the owner's activity for every loop: a loop that stops must not close it for the others.
  const activity = ownerActivity && { ownerIdle: ownerActivity.ownerIdle.bind(ownerActivity) };
  const failed = new AbortController();
  const signal = AbortSignal.any([rest.signal, failed.signal]);
  let failure: unknown = null;
  const loops = new Map<string, AbortController>();
  const finished: Promise<ProducerSummary | null>[] = [];
  const start = (managerId: string) => {
    const stop = new AbortController();
    loops.set(managerId, stop);
    const api = createTrpcApi(url, token, { manager: managerId });
    finished.push(
      runProducer({
        ...rest,
        ...(activity ? { ownerActivity: activity } : {}),
        signal: AbortSignal.any([signal, stop.signal]),
        api: { ...api, register: onlyWith(managerId, api) },
        machine: { ...machine, offerKey },
        share,
        registerAttempts: options.registerAttempts ?? Infinity,
        onEvent: (event) => onEvent?.(managerId, event),
      }).catch((e: unknown) => {
        failure ??= e;
        failed.abort();
        return null;
      }),
    );
  };
  for (const m of chosen) start(m.id);
  while (!signal.aborted) {
    await pause(checkEveryMs, signal);
    if (signal.aborted) break;
    let live: { id: string }[];
    try {
      live = await liveManagersAt(url, token);
    } catch {
      continue; // the front door did not answer: the loops go on as they are
    }
    const wanted = managersWanted(live, choice, [...loops.keys()]);
    let changed = false;
    for (const [id, stop] of loops) {
      if (wanted.includes(id)) continue;
      loops.delete(id);
      stop.abort();
      changed = true;
    }
    for (const id of wanted) {
      if (loops.has(id)) continue;
      start(id);
      changed = true;
    }
    if (changed) onManagers?.([...loops.keys()]);
  }
  const summaries = await Promise.all(finished);
  ownerActivity?.close?.();
  if (failure !== null) throw failure;
  return summaries.filter((s): s is ProducerSummary => s !== null);
}

/**
 * A loop's registrations go to its own manager only. The market sends a registration naming a
 * manager that is no longer live to another (the one with the most room): that machine is given
 * back, and the loop tries again until its manager is live or the loop is stopped.
 */
function onlyWith(managerId: string, api: WorkerApi): WorkerApi["register"] {
  return async (input) => {
    const registration = await api.register(input);
    if (registration.managerId === undefined || registration.managerId === managerId) return registration;
    await api.depart({ machineId: registration.machineId }).catch(() => {});
    throw new Error(`the Market Manager ${managerId} is not live: the market sent this registration to ${registration.managerId}, given back`);
  };
}

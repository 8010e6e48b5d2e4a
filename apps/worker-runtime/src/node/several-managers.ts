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

export interface SeveralOptions extends Omit<ProducerOptions, "api" | "share" | "onEvent"> {
  url: string;
  token: string;
  choice: ManagerChoice;
  /** Each loop's events, with the manager it is for. */
  onEvent?: (managerId: string, event: ProducerEvent) => void;
  /** Told the managers chosen, before any registers. */
  onManagers?: (ids: string[]) => void;
}

/**
 * Offers the machine to the managers chosen and runs until `signal` aborts. A loop whose manager
 * is gone (another took it over and its row of the machine departed) registers again with a live
 * manager that does not hold the machine yet, and waits while there is none.
 */
export async function runOfferedToSeveral(options: SeveralOptions): Promise<ProducerSummary[]> {
  const { url, token, choice, onEvent, onManagers, machine, ...rest } = options;
  if (machine.kind === "dedicated") throw new Error("a dedicated machine is offered to one Market Manager only: its contract pays for its hours, and several would pay them more than once");
  const chosen = pickManagers(await liveManagersAt(url, token), choice);
  if (!chosen.length) throw new Error("the market has no live Market Manager to offer this machine to");
  onManagers?.(chosen.map((m) => m.id));
  const share = new SlotShare();
  const offerKey = randomUUID();
  return Promise.all(
    chosen.map((m) =>
      runProducer({
        ...rest,
        api: createTrpcApi(url, token, { manager: m.id }),
        machine: { ...machine, offerKey },
        share,
        registerAttempts: options.registerAttempts ?? Infinity,
        onEvent: (event) => onEvent?.(m.id, event),
      }),
    ),
  );
}

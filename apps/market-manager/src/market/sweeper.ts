import type { Market } from "./market.ts";
import { departMachine, placePendingTasks } from "../resources/machines.ts";
import { expireLeases } from "../resources/leases.ts";
import { reevaluateDelayed } from "../tasks/jobs.ts";
import { rebalance } from "./rebalance.ts";

/**
 * The market's clock tick: machines that missed heartbeats for the lease timeout have departed,
 * leases past their time are taken back, tasks without a machine are placed, and delayed jobs
 * are asked again.
 */
export async function tick(market: Market, maxDelayMs: number) {
  const now = market.clock.now();
  for (const m of [...market.state.machines.values()]) {
    if (now - m.lastHeartbeatAt > market.settings.leaseTimeoutMs) {
      await market.serial(() => departMachine(market, m.id, "missed-heartbeats"));
    } else if (m.departsAt !== null && m.departsAt <= now) {
      await market.serial(() => departMachine(market, m.id, "contract-ended"));
    }
  }
  await expireLeases(market);
  await market.serial(() => placePendingTasks(market));
  await reevaluateDelayed(market, maxDelayMs);
  await rebalance(market);
}

export function startSweeper(market: Market, everyMs: number, maxDelayMs: number) {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    tick(market, maxDelayMs)
      .catch((e) => market.log(`tick failed: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => (running = false));
  }, everyMs);
  return () => clearInterval(timer);
}

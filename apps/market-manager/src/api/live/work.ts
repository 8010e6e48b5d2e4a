import type { Market } from "../../market/market.ts";
import { leaseRoomOf, type LiveMachine } from "../../market/live.ts";
import { spare, spareTotal } from "../../market/work-routes.ts";
import { leaseTasks } from "../../resources/leases.ts";
import type { Caller } from "../trpc.ts";
import type { Lease } from "@cyclemarket/worker-runtime";

/**
 * About how many tasks a lease by this machine would get now: its own queue, then the spare
 * queued tasks of other machines, up to what leasing allows it (twice its slots, less what it
 * holds; resources/leases.ts). A hint to lease, read without the lock: the lease decides, and a
 * hint that turns out empty costs one empty lease.
 */
export function workOnOffer(market: Market, machine: LiveMachine): number {
  const room = leaseRoomOf(machine);
  if (room <= 0) return 0;
  return Math.min(room, machine.queue.length + spareTotal(market) - spare(machine));
}

/**
 * Leases for a worker that takes them on its work stream (WorkStreamRequest `lease`), made as its
 * own lease call makes them (the same group commit: durable before they are sent) but only while
 * the machine still holds none when its turn comes, so a worker's own call and its stream never
 * both fill it. The stream is no sign of life (only the worker's calls are). Any failure leaves
 * the offer plain: the worker then leases with its own call, which hears why.
 */
export async function streamLeases(market: Market, caller: Caller, machineId: string, max: number, signal: AbortSignal | undefined): Promise<Lease[]> {
  try {
    return (await leaseTasks(market, caller, machineId, max, signal, { onlyIdle: true })).leases;
  } catch {
    return [];
  }
}

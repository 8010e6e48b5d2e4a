import { setImmediate as letCallsIn } from "node:timers/promises";
import type { Market } from "./market.ts";
import type { LiveMachine } from "./live.ts";
import { departMachine, placePendingTasks } from "../resources/machines.ts";
import { expireLeases } from "../resources/leases.ts";
import { answerDelayed } from "../tasks/jobs.ts";
import { admitRemainders } from "./remainder.ts";
import { rebalance } from "./rebalance.ts";
import { accrueContracts } from "../resources/contracts.ts";
import { checkPresence } from "../resources/presence.ts";
import { LIVENESS_FLUSH_MS } from "../resources/liveness.ts";
import { ALIVE_STAMP_MS, stampAlive } from "./restore.ts";

/**
 * The market's clock tick: machines that missed heartbeats for the lease timeout have departed,
 * leases past their time are taken back, tasks without a machine are placed, and the engine's
 * tick is applied: its moves, then its answers on delayed jobs (given up on, or asked again), one
 * step per job. Between its steps the event loop reads the calls that arrived (letCallsIn): steps
 * that wait on nothing would otherwise run back to back. A step that changes the market runs
 * alone, once the journal's statements are written (Market.serial); the tick takes such a step
 * only when it has something to do, as every other step waits behind it: the engine's tick itself
 * is decided from memory, as a hot step is, with its moves (rebalance.ts).
 */
export async function tick(market: Market) {
  const now = market.clock.now();
  // Silence is judged again when the departure's turn comes: a heartbeat that arrived while it
  // waited for the lock keeps the machine (liveness is when heartbeats arrive, not when the queue gets to them).
  const silent = (m: LiveMachine) => market.clock.now() - m.lastHeartbeatAt > market.settings.leaseTimeoutMs;
  // Leases a machine takes and lets lapse prove nothing: more than a round of its slots expired
  // with no result between takes it out. (Work it leaves unleased is presence.ts's miss.)
  const deaf = (m: LiveMachine) => m.unprovenExpiries > m.slots;
  for (const m of [...market.state.machines.values()]) {
    if (silent(m)) {
      await market.serial(async () => {
        if (market.state.machines.get(m.id) === m && silent(m)) await departMachine(market, m.id, "missed-heartbeats");
      });
    } else if (deaf(m)) {
      await market.serial(async () => {
        if (market.state.machines.get(m.id) === m && deaf(m)) await departMachine(market, m.id, "missed-leases");
      });
    } else if (m.departsAt !== null && m.departsAt <= now) {
      await market.serial(() => departMachine(market, m.id, "contract-ended"));
    }
  }
  await letCallsIn();
  await expireLeases(market);
  await letCallsIn();
  // Work left unleased and probes unanswered are misses; idle dedicated machines are probed.
  await checkPresence(market);
  await letCallsIn();
  if (market.state.machines.size > 0 && market.state.hasPendingTasks()) await market.serial(() => placePendingTasks(market));
  await letCallsIn();
  const at = market.clock.now();
  // Its moves are applied in the same step (rebalance.ts), their statement to the journal.
  const decided = await market.pipelined(() => {
    const d = market.engine.tick(at);
    if (d.moves.length) rebalance(market, d.moves, at);
    return d;
  });
  await answerDelayed(market, decided);
  await letCallsIn();
  await admitRemainders(market);
  await letCallsIn();
  await accrueContracts(market);
}

/**
 * Gives every machine a fresh timeout from now, and every active lease the time the market was
 * away. Used when the market could not hear its workers through no fault of theirs (it was down,
 * or its database was): their silence then says nothing about them, and departing them all, or
 * expiring their leases, would throw away running work.
 */
export function forgiveSilence(market: Market, awayMs: number) {
  const now = market.clock.now();
  for (const m of market.state.machines.values()) {
    m.lastHeartbeatAt = Math.max(m.lastHeartbeatAt, now);
    // Nor could they lease their work or answer their probes: the delays run again from now.
    m.owedSince = undefined;
    if (m.probe) m.probe.dueAt = Math.max(m.probe.dueAt, now + market.settings.leaseTimeoutMs);
  }
  // A lease keeps the time it had left when the market went away.
  for (const l of market.state.leases.values()) l.expiresAt += Math.max(0, awayMs);
}

export function startSweeper(market: Market, everyMs: number) {
  const flushing = setInterval(() => void market.liveness.flush().catch((e) => market.log(`heartbeats not written yet: ${e instanceof Error ? e.message : String(e)}`)), LIVENESS_FLUSH_MS);
  const stamping = setInterval(() => void stampAlive(market).catch(() => {}), ALIVE_STAMP_MS);
  let running = false;
  let failedAt: number | null = null;
  const timer = setInterval(() => {
    if (running) return;
    // Not before a stamp says this manager still holds its market (Managers.fresh): woken after a
    // silence, its first tick would otherwise depart the machines it did not hear, and expire and
    // place again the leases and tasks another manager took over meanwhile. The silence is then
    // forgiven, as after a failed tick: the machines it did not hear meanwhile (the database away,
    // or this process stopped) were not the ones silent.
    if (market.managers && !market.managers.fresh()) {
      failedAt ??= market.clock.now();
      return;
    }
    running = true;
    // After a failed tick (the database was away), heartbeats could not be heard either.
    const away = failedAt === null ? 0 : market.clock.now() - failedAt;
    const step = failedAt !== null ? market.serial(async () => forgiveSilence(market, away)).then(() => tick(market)) : tick(market);
    step
      .then(() => (failedAt = null))
      .catch((e) => {
        failedAt ??= market.clock.now();
        market.log(`tick failed: ${e instanceof Error ? e.message : String(e)}`);
      })
      .finally(() => (running = false));
  }, everyMs);
  return () => {
    clearInterval(timer);
    clearInterval(flushing);
    clearInterval(stamping);
  };
}

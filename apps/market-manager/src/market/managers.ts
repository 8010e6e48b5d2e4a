import type { Market } from "./market.ts";
import type { Db } from "../db/client.ts";
import { refuse } from "../api/errors.ts";
import { runStatement, type Runner } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { joinManager, machineManager, managerMoved, managerRows, offerHolders, stampManager, takeUnownedJobs, takeUnownedMachines } from "../db/sql/market-managers.ts";

// Several Market Managers over one market (the Java Market paper, section 4.4: several schedulers,
// each over a subset of the producers). They find each other in PostgreSQL, not through a
// coordination service of their own: each stamps its row of `market_manager` with the database's
// clock, and a manager whose stamp is older than the timeout is taken over by another, with
// conditional updates, so two survivors never both take the same machine or job (adopt.ts).

/** A manager of the market as the others see it (its row, and how long since its stamp). */
export interface ManagerView {
  id: string;
  url: string;
  healthUrl: string | null;
  machines: number;
  jobs: number;
  capacity: number;
  tasksDone: number;
  startedAt: number;
  heartbeatAt: number;
  /** Its stamp is within the timeout and nobody has taken it over. */
  alive: boolean;
  claimedBy: string | null;
  /** Tasks per second settled by it, over the last view's interval. */
  tasksPerSecond: number;
}

export interface ManagerIdentity {
  id: string;
  /** Where workers and the other managers reach its API. */
  url: string;
  healthUrl: string | null;
  /** A manager not stamped for this long is dead, and another takes over what it held. */
  timeoutMs: number;
  /** The machines it is sized for: its room is this less the machines it holds. */
  capacity: number;
}

/** Tasks settled by this manager since it started, as its heartbeat reports them. */
export type TasksDone = () => number;

/**
 * How long a registration routed to a manager counts against its room without its stamp showing
 * it: longer than a worker takes to follow the answer and the manager to stamp (a second).
 */
const SENT_FORGOTTEN_MS = 5_000;

/** Machines handed away whose new manager a manager remembers, to tell their workers. */
const MAX_REMEMBERED_HANDOFFS = 100_000;

export class Managers {
  /** Restored: it may take over dead managers now (before, its own market is still being read). */
  ready = false;
  /** Every manager the database knows, as of the last stamp (this one included). */
  view: ManagerView[] = [];
  /**
   * Registrations routed to each manager (this one's own too) that its stamp does not show yet,
   * when each was sent: counted against the room the view shows, so a burst of machines
   * registering at once is spread. A manager's new stamp showing more machines than its last
   * accounts for as many of them, oldest first (refresh); one never shown is forgotten after
   * SENT_FORGOTTEN_MS (its worker gave up, or machines left as fast as they came).
   */
  private sent = new Map<string, number[]>();
  /** The machines this manager held at the last view, and at the one before. */
  private heldAtView = 0;
  private heldBeforeView = 0;
  /**
   * Each manager's machines gained between its last two stamps, and the time between them:
   * while machines keep registering, its count now is higher than its stamp shows (unstamped).
   */
  private gained = new Map<string, { machines: number; overMs: number }>();
  /** Machines each manager may hold that its stamp does not show, as of the last view (unstamped). */
  private behindAtView = new Map<string, number>();
  private lastDone = new Map<string, { done: number; at: number }>();
  /** When the last stamp that found this manager still itself was sent (this host's clock). */
  private stampedAt = Date.now();

  private run: Runner;

  constructor(
    db: Db,
    readonly self: ManagerIdentity,
  ) {
    this.run = viaPrisma(db);
  }

  /**
   * Joins the market (again): its row stamped now and no longer taken over. A survivor taking it
   * over holds the row's lock until the machines and jobs it took have moved, so what this
   * manager restores after the join is what is still its own.
   */
  async join(): Promise<void> {
    const { id, url, healthUrl, capacity } = this.self;
    const at = Date.now();
    await runStatement(this.run, joinManager, { id, url, healthUrl, capacity });
    this.stampedAt = at;
    await this.refresh();
  }

  /** Its address, known once it listens (a port chosen by the system). */
  async moved(url: string, healthUrl: string | null): Promise<void> {
    this.self.url = url;
    this.self.healthUrl = healthUrl;
    await runStatement(this.run, managerMoved, { id: this.self.id, url, healthUrl });
  }

  /**
   * Machines and open jobs without a manager (a market from before there were several, or rows
   * written by a manager of an older version) become this one's; each row once, whoever asks first.
   */
  async takeUnowned(): Promise<void> {
    await runStatement(this.run, takeUnownedMachines, { managerId: this.self.id });
    await runStatement(this.run, takeUnownedJobs, { managerId: this.self.id });
  }

  /**
   * Stamps this manager's row with what it holds, and reads every row. False when another
   * manager has taken this one over (it was silent past the timeout): what it held is no longer
   * its own, and it must stop rather than act on it.
   */
  async beat(holds: { machines: number; jobs: number; tasksDone: number }): Promise<boolean> {
    const at = Date.now();
    const stamped = await runStatement(this.run, stampManager, { id: this.self.id, machines: holds.machines, jobs: holds.jobs, tasksDone: String(Math.round(holds.tasksDone)) });
    this.heldBeforeView = this.heldAtView;
    if (stamped.length > 0) this.stampedAt = at;
    this.heldAtView = holds.machines;
    await this.refresh();
    return stamped.length > 0;
  }

  /**
   * Whether a stamp found this manager still itself within half the takeover timeout. A manager
   * that was silent longer (stopped by its host, say) may have been taken over: its memory is then
   * another's, and it must not act on it (depart machines it did not hear, expire leases, place
   * tasks) before its next stamp says whether it still holds them.
   */
  fresh(): boolean {
    return Date.now() - this.stampedAt < this.self.timeoutMs / 2;
  }

  private async refresh(): Promise<void> {
    const rows = await runStatement(this.run, managerRows, {});
    const now = Date.now();
    const before = new Map(this.view.map((m) => [m.id, m]));
    this.view = rows.map((r) => {
      const done = Number(r.tasksDone);
      const before = this.lastDone.get(r.id);
      this.lastDone.set(r.id, { done, at: now });
      const tasksPerSecond = before && now > before.at && done >= before.done ? ((done - before.done) * 1000) / (now - before.at) : 0;
      return {
        id: r.id,
        url: r.url,
        healthUrl: r.healthUrl,
        machines: r.machines,
        jobs: r.jobs,
        capacity: r.capacity,
        tasksDone: done,
        startedAt: r.startedAt,
        heartbeatAt: r.heartbeatAt,
        alive: r.claimedBy === null && r.ageMs <= this.self.timeoutMs,
        claimedBy: r.claimedBy,
        tasksPerSecond,
      };
    });
    this.settleSent(before, now);
    this.settleGained(before, rows);
  }

  /**
   * How far behind each manager's stamp may be: the machines it gained over its last interval
   * between stamps, for every such interval since that stamp (at least one: the next stamp is
   * that far off). Zero for a manager not seen stamping twice, or not gaining.
   */
  private settleGained(before: ReadonlyMap<string, ManagerView>, rows: readonly { id: string; ageMs: number }[]): void {
    const age = new Map(rows.map((r) => [r.id, r.ageMs]));
    this.behindAtView.clear();
    for (const m of this.view) {
      const last = before.get(m.id);
      if (!last) this.gained.delete(m.id);
      else if (m.heartbeatAt > last.heartbeatAt) this.gained.set(m.id, { machines: Math.max(0, m.machines - last.machines), overMs: m.heartbeatAt - last.heartbeatAt });
      const g = this.gained.get(m.id);
      if (g && g.machines > 0 && m.alive) this.behindAtView.set(m.id, Math.ceil(g.machines * Math.max(1, (age.get(m.id) ?? 0) / g.overMs)));
    }
    for (const id of this.gained.keys()) if (!this.view.some((m) => m.id === id)) this.gained.delete(id);
  }

  /**
   * This manager's machines for the fair share (machine-handoff.ts): the fewest of `live` and its
   * last two stamps. The others' stamps in the view are up to a beat old, and its own count a beat
   * ago is no newer than theirs; one that is really over its share is over at every stamp.
   */
  heldSettled(live: number): number {
    return Math.min(live, this.heldAtView, this.heldBeforeView);
  }

  /**
   * Machines `id` may hold that its stamp does not show yet: those routed to it unshown, or as
   * many as it was gaining between stamps, whichever is more. The fair share counts them, so a
   * manager weighs its own count now against the others' counts now, not their last stamps.
   */
  unstamped(id: string): number {
    return Math.max(this.unshown(id), this.behindAtView.get(id) ?? 0);
  }

  /** Registrations routed that each manager's new stamp shows now, or sent too long ago, no longer count against its room. */
  private settleSent(before: ReadonlyMap<string, ManagerView>, now: number): void {
    for (const m of this.view) {
      const sent = this.sent.get(m.id);
      if (!sent) continue;
      const last = before.get(m.id);
      const shown = !last ? m.machines : m.heartbeatAt > last.heartbeatAt ? Math.max(0, m.machines - last.machines) : 0;
      const kept = m.alive ? sent.slice(shown).filter((at) => now - at < SENT_FORGOTTEN_MS) : [];
      if (kept.length) this.sent.set(m.id, kept);
      else this.sent.delete(m.id);
    }
    for (const id of this.sent.keys()) if (!this.view.some((m) => m.id === id)) this.sent.delete(id);
  }

  /** Registrations routed to `id` that its stamp does not show yet. */
  private unshown(id: string): number {
    return this.sent.get(id)?.length ?? 0;
  }

  /** The managers whose stamps are within the timeout and nobody took over. */
  alive(): ManagerView[] {
    return this.view.filter((m) => m.alive);
  }

  /**
   * The manager a machine registers with: the one it names if that one is alive, or the one with
   * the most room (this one when it has as much as any). Registrations sent to a manager that its
   * stamp does not show yet count against its room, so a burst of machines is spread.
   */
  placeFor(named: string | undefined, ownMachines: number, except: ReadonlySet<string> = new Set()): ManagerView | null {
    const alive = this.alive().filter((m) => !except.has(m.id));
    if (named) {
      const m = alive.find((x) => x.id === named);
      if (m) return m;
    }
    let best: ManagerView | null = null;
    let bestRoom = -Infinity;
    for (const m of alive) {
      // Its own: those in memory, or more while registrations it kept are still being written.
      const held = m.id === this.self.id ? Math.max(ownMachines, this.heldAtView + this.unshown(m.id)) : m.machines + this.unshown(m.id);
      const room = m.capacity - held;
      if (room > bestRoom || (room === bestRoom && m.id === this.self.id)) {
        best = m;
        bestRoom = room;
      }
    }
    return best;
  }

  /** Machines this manager handed to another (machine-handoff.ts): their workers' calls here are told where they went. */
  private handed = new Map<string, { managerId: string; managerUrl: string }>();

  /** `machineId` was handed to `to`. Bounded: a worker that calls after many more handoffs is told its machine is unknown, and registers again. */
  movedAway(machineId: string, to: ManagerView): void {
    this.handed.set(machineId, { managerId: to.id, managerUrl: to.url });
    if (this.handed.size > MAX_REMEMBERED_HANDOFFS) this.handed.delete(this.handed.keys().next().value!);
  }

  /** A machine handed away and handed back again is this manager's once more. */
  cameBack(machineId: string): void {
    this.handed.delete(machineId);
  }

  /** The manager `machineId` was handed to, if this one handed it away. */
  whereMoved(machineId: string): { managerId: string; managerUrl: string } | undefined {
    return this.handed.get(machineId);
  }

  /** A registration was routed to `id` (this manager's own included): its room is smaller by one until its stamp shows the machine. */
  sentTo(id: string): void {
    const sent = this.sent.get(id);
    if (sent) sent.push(Date.now());
    else this.sent.set(id, [Date.now()]);
  }

  /**
   * Managers silent past the timeout whose machines and jobs nobody has taken yet. (A taker's
   * claim and the rows it moves commit together, so what a taker that died in turn took is its
   * own, and goes with it.)
   */
  dead(): ManagerView[] {
    return this.view.filter((m) => m.id !== this.self.id && !m.alive && m.claimedBy === null);
  }
}

/**
 * The manager that holds a producer's machine now, as the database has it: the dead manager's
 * own address until another takes it over (alive false: ask again), the taker's after. Null when
 * the machine is not in the market (or not the caller's): register again.
 */
export async function whereIs(market: Market, ownerId: string, machineId: string) {
  const [row] = await runStatement(viaPrisma(market.db), machineManager, { machineId, ownerId, timeoutMs: market.managers?.self.timeoutMs ?? 0 });
  if (!row) return { managerId: null, managerUrl: null, alive: false };
  return { managerId: row.managerId, managerUrl: row.url, alive: row.alive === true };
}

/**
 * A registration that can follow (the worker said so) is sent to the manager with the most room,
 * or the one it named: a refusal naming where to register, which the worker follows
 * (worker-runtime's trpc-api.ts). A worker that cannot follow (a browser page behind the web app)
 * registers here.
 *
 * A machine offered to several managers at once (its `offerKey`; the Java Market paper, section
 * 4.4: the subsets may intersect) is placed only with a manager that holds no row of it yet, so
 * each manager holds it once and the worker's loops, one a manager, never meet at one.
 */
export async function routeRegistration(market: Market, ownerId: string, offer: { manager?: string | undefined; follow?: boolean | undefined; offerKey?: string | undefined }): Promise<void> {
  const managers = market.managers;
  const selfId = managers?.self.id ?? market.managerId;
  let holders = new Set<string>();
  if (offer.offerKey !== undefined) {
    const rows = await runStatement(viaPrisma(market.db), offerHolders, { ownerId, offerKey: offer.offerKey });
    holders = new Set(rows.flatMap((r) => (r.managerId === null ? [] : [r.managerId])));
    if (holders.has(selfId) && (!managers || !offer.follow)) {
      throw refuse.conflict({ code: "offered-here-already", managerId: selfId }, `This machine is already offered to the Market Manager ${selfId}: a manager holds it once.`);
    }
  }
  if (!managers || !offer.follow) return;
  const target = managers.placeFor(offer.manager, market.state.machines.size, holders);
  if (!target) {
    if (offer.offerKey === undefined) return;
    const live = managers.alive().length;
    throw refuse.conflict({ code: "offered-to-every-manager", managers: live }, `This machine is already offered to every live Market Manager (${live}).`);
  }
  managers.sentTo(target.id);
  if (target.id === managers.self.id) return;
  throw refuse.conflict(
    { code: "register-elsewhere", managerId: target.id, managerUrl: target.url },
    `Register with the Market Manager ${target.id} at ${target.url}: it has the most room.`,
  );
}

/** The live managers a machine may be offered to, the most room first: a worker offering it to several picks among them. */
export function liveManagers(market: Market): { managers: { id: string; url: string | null }[] } {
  const managers = market.managers;
  // One manager: the address the worker reached it at (a proxy, the web app) is the right one.
  if (!managers) return { managers: [{ id: market.managerId, url: null }] };
  const room = (m: ManagerView) => m.capacity - m.machines;
  return { managers: managers.alive().sort((a, b) => room(b) - room(a) || a.id.localeCompare(b.id)).map((m) => ({ id: m.id, url: m.url })) };
}

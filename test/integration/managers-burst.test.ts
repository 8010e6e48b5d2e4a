import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { withDb } from "../support/books.ts";
import { managersOnOneDatabase, registerFollowing } from "../support/managers.ts";
import { waitFor } from "../support/processes.ts";

// A burst of registrations does not set the fair share handing machines around (issue 47, item 2;
// docs/SCALING.md "Several managers"). Three managers with equal room; 300 machines register
// through one of them, over several of the managers' stamps, each free to be handed to another
// manager (no offer key, and a worker that follows a move). The routing spreads them evenly, so
// no manager is over its fair share: none hands a machine away, during the burst or once every
// stamp shows it, and each machine stays with the manager it registered with.

const MACHINES = 300;
const AT_ONCE = 3;
/** Each lane's pause between registrations: the burst spans several stamps. */
const PACE_MS = 20;
/** Once every stamp shows the burst: long enough for a plan found at two stamps in a row to be acted on. */
const SETTLE_MS = 5000;

// The machines register without a worker to keep them heard: a long lease timeout keeps them in the market.
const { start, database, managers } = await managersOnOneDatabase("cyclemarket-burst-", { LEASE_TIMEOUT_MS: "120000" });

const handoffs = () => managers.flatMap((m) => m.out.lines.filter((l) => /handed \d+ idle machine\(s\)/.test(l)));

describe("a burst of registrations across managers with rebalancing on", () => {
  it("moves no machine, and lands within one machine of even", async () => {
    const first = await start("manager-1");
    const token = readFileSync(first.tokenFile, "utf8").trim();
    await start("manager-2");
    await start("manager-3");
    await waitFor("manager-1 to list the three managers to workers", async () => {
      const res = await fetch(`${first.url}/api/trpc/worker.managers`, { headers: { authorization: `Bearer ${token}` } });
      return ((await res.json()) as { result: { data: { managers: unknown[] } } }).result.data.managers.length === 3 ? true : undefined;
    }, 20_000);

    const registeredWith = new Map<string, string>();
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < MACHINES) {
          const { machineId, managerId } = await registerFollowing(first.url, token, `burst-${next++}`);
          registeredWith.set(machineId, managerId);
          await new Promise((r) => setTimeout(r, PACE_MS));
        }
      }),
    );
    const spanMs = Date.now() - started;
    // The burst spans several of the managers' stamps (one a second), or it would not test them.
    expect(spanMs, "the burst's span (ms)").toBeGreaterThan(1500);

    // Every manager's stamp shows what it holds, then a while for any plan to be acted on.
    await waitFor("every manager's stamp to show the burst", () =>
      withDb(database.url, async (db) => {
        const stamps = await db.marketManager.findMany({ select: { id: true, machines: true } });
        const held = await db.machine.groupBy({ by: ["managerId"], where: { status: "active", name: { startsWith: "burst-" } }, _count: { _all: true } });
        const heldBy = new Map(held.map((r) => [r.managerId, r._count._all]));
        return stamps.length === 3 && stamps.every((s) => s.machines === (heldBy.get(s.id) ?? 0)) && stamps.reduce((n, s) => n + s.machines, 0) === MACHINES ? true : undefined;
      }), 20_000);
    await new Promise((r) => setTimeout(r, SETTLE_MS));

    expect(handoffs(), "machines handed by the fair share").toEqual([]);
    const rows = await withDb(database.url, (db) => db.machine.findMany({ where: { name: { startsWith: "burst-" } }, select: { id: true, managerId: true, status: true } }));
    expect(rows).toHaveLength(MACHINES);
    const moved = rows.filter((r) => r.status !== "active" || r.managerId !== registeredWith.get(r.id));
    expect(moved, "machines no longer active with the manager they registered with").toEqual([]);
    const counts: Record<string, number> = {};
    for (const r of rows) counts[r.managerId!] = (counts[r.managerId!] ?? 0) + 1;
    expect(Object.keys(counts).sort()).toEqual(["manager-1", "manager-2", "manager-3"]);
    const worst = Math.max(...Object.values(counts).map((n) => Math.abs(n - MACHINES / 3)));
    expect(worst, `machines each manager holds: ${JSON.stringify(counts)}`).toBeLessThanOrEqual(1);
  });
});

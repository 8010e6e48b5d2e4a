import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { withDb } from "../support/books.ts";
import { managersOnOneDatabase, registerFollowing } from "../support/managers.ts";
import { waitFor } from "../support/processes.ts";

// Registrations routed to the Market Manager with the most room (issue 47, item 2; docs/SCALING.md
// "Several managers"). A burst of machines registering through one manager, over several of its
// views of the managers (one a second), lands evenly on three managers with equal room: what it
// sent each counts against that one's room until the manager's own stamp shows the machines.
// Each machine carries an offer key of its own, so the fair share never hands one to another
// manager (a machine offered to several stays where it registered) and what is counted is the
// routing alone.

const MACHINES = 300;
const AT_ONCE = 3;
/** Each lane's pause between registrations: the burst spans several views. */
const PACE_MS = 20;

const { start, database } = await managersOnOneDatabase("cyclemarket-routing-");

describe("a burst of registrations across managers with equal room", () => {
  it("lands within one machine of even", async () => {
    const first = await start("manager-1");
    const token = readFileSync(first.tokenFile, "utf8").trim();
    await start("manager-2");
    await start("manager-3");
    await waitFor("manager-1 to list the three managers to workers", async () => {
      const res = await fetch(`${first.url}/api/trpc/worker.managers`, { headers: { authorization: `Bearer ${token}` } });
      return ((await res.json()) as { result: { data: { managers: unknown[] } } }).result.data.managers.length === 3 ? true : undefined;
    }, 20_000);

    const landed = new Map<string, number>();
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < MACHINES) {
          const { managerId: id } = await registerFollowing(first.url, token, `burst-${next++}`, randomUUID());
          landed.set(id, (landed.get(id) ?? 0) + 1);
          await new Promise((r) => setTimeout(r, PACE_MS));
        }
      }),
    );
    const spanMs = Date.now() - started;
    // Each registration is a row at the manager it was sent to.
    const rows = await withDb(database.url, (db) => db.machine.groupBy({ by: ["managerId"], where: { name: { startsWith: "burst-" } }, _count: { _all: true } }));
    const counts = Object.fromEntries([...landed].sort());
    expect(Object.keys(counts)).toEqual(["manager-1", "manager-2", "manager-3"]);
    expect(Object.fromEntries(rows.map((r) => [r.managerId, r._count._all]).sort())).toEqual(counts);
    // The burst spans several of the router's views (one a second), or it would not test them.
    expect(spanMs, "the burst's span (ms)").toBeGreaterThan(1500);
    const worst = Math.max(...Object.values(counts).map((n) => Math.abs(n - MACHINES / 3)));
    expect(worst, `machines each manager got: ${JSON.stringify(counts)}`).toBeLessThanOrEqual(1);
  });
});

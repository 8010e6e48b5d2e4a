import { afterAll, describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { countBy, GoldenScenario, MARKET_REASON_CODES, Reason } from "@cyclemarket/costbenefit";
import { CAT_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { root } from "../support/processes.ts";

// The golden scenarios the engine replays (packages/costbenefit/golden), replayed by the live
// market through its API: producers register the scenario's machines, consumers submit its jobs
// in order, and every decision (outcome, the engine's reasons, tasks per machine as the database
// records them) must be the one the file holds. The service may add reasons of its own after the
// engine's (a replica shortfall, say), never change or drop the engine's.

const dir = join(root, "packages", "costbenefit", "golden");
const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
const engineCodes = new Set<string>(Reason.options.map((o) => o.shape.code.value));
const cat = wat(CAT_WAT);
const markets: TestMarket[] = [];
afterAll(async () => {
  for (const m of markets) await m.stop();
});

describe("golden scenarios, replayed by the live market", () => {
  for (const file of files) {
    it(file, async () => {
      const scenario = GoldenScenario.parse(JSON.parse(readFileSync(join(dir, file), "utf8")));
      const market = await startTestMarket();
      markets.push(market);
      const db = market.manager.services.db;

      const names = new Map<string, string>();
      for (const owner of new Set(scenario.machines.map((m) => m.owner))) {
        const producer = await market.signUp(`${owner}@example.test`, ["producer"]);
        const worker = market.tokenClient((await producer.account.tokens.create.mutate({ name: "rack" })).token);
        for (const m of scenario.machines.filter((x) => x.owner === owner)) {
          const { machineId } = await worker.worker.register.mutate({
            name: m.id,
            kind: "opportunistic",
            slots: m.slots,
            speed: m.speed,
            memoryPerSlotMb: m.memoryPerSlotMb,
            bandwidthBytesPerSecond: 1e7,
            pricePerSecond: m.pricePerSecond,
            userAgent: "golden",
          });
          names.set(machineId, m.id);
        }
      }

      for (const [i, job] of scenario.jobs.entries()) {
        const consumer = await market.signUp(`consumer${i}@example.test`, ["consumer"]);
        const { token } = await consumer.account.tokens.create.mutate({ name: "upload", scopes: ["consume"] });
        const put = await fetch(`${market.url}/api/modules`, { method: "PUT", headers: { authorization: `Bearer ${token}` }, body: new Uint8Array(cat) });
        expect(put.ok).toBe(true);
        const { jobId, decision } = await consumer.jobs.submit.mutate({
          name: job.id,
          benefit: job.benefit,
          replicas: job.replicas,
          source: {
            kind: "module",
            moduleHash: createHash("sha256").update(cat).digest("hex"),
            workPerTask: job.workPerTask,
            limits: { memoryMb: job.memoryMb, wallSeconds: 60 },
            tasks: Array.from({ length: job.tasks }, () => ({})),
          },
        });
        const codes = decision.reasons.map((r: { code: string }) => r.code);
        for (const c of codes) expect(MARKET_REASON_CODES, `reason ${c} is in the vocabulary`).toContain(c);
        const got: Record<string, unknown> = { outcome: decision.outcome, reasons: codes.filter((c: string) => engineCodes.has(c)) };
        if (decision.outcome === "admitted") {
          const tasks = await db.task.findMany({ where: { jobId }, select: { machineId: true } });
          got.tasksOn = countBy(tasks.map((t) => names.get(t.machineId ?? "") ?? "unplaced"));
        }
        expect(got, `${file}: job ${job.id}`).toEqual(job.expect);
      }
    }, 120_000);
  }
});

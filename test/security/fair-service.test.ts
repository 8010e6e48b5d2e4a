import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { moduleImporting } from "../support/wasm.ts";
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { sharedDatabase } from "../support/postgres.ts";
import { signUp, startManager, stopGently, tempDir, type ManagerProcess } from "../support/processes.ts";
import { mutation, send } from "./http.ts";

// One abusive client submits at its quota's limit (10,000-task jobs with 1 KB of stdin per task,
// first while no machine can take them, so they wait as delayed jobs the market re-evaluates, then
// while one can) while other users quote, read their jobs and one of them leases work. Their calls
// must stay quick: big jobs are admitted and re-evaluated without holding the market's lock for
// their database work (tasks/jobs.ts), and their requests of megabytes are parsed, checked and
// stored by intake threads, not on the market's thread (http/held-body.ts, tasks/intake-pool.ts).

/**
 * The bounds on the bystander's 99th percentile over every call (README "Limits and quotas") and
 * on the market's longest event-loop stall over the abuse. The goal is 100 ms; the test runs on
 * a shared 2-core machine where a stretch of the market's thread takes several times its CPU
 * time, so the bounds sit well above what the test sees on a loaded machine and well below the
 * stalls of seconds they guard against (issue 16). The stalls left come from the engine's own
 * re-evaluation of a 10,000-task job, the clients' big bodies and garbage collection.
 */
const BYSTANDER_P99_MS = 2000;
const LOOP_MAX_MS = 1500;
/** The figure the README promises for accepting such a job; printed, asserted only as accepted. */
const ACCEPT_GOAL_MS = 2000;
const TASKS = 10_000;
/**
 * Other users at once, each at about one round of calls a second: a 99th percentile needs a
 * hundred calls and more, and one user makes some forty over the abuse.
 */
const BYSTANDERS = 4;
const STDIN_BYTES = 1024;

// The market in its own process, as in production: the abusive client's own work (building a
// big request) is not counted against the market.
let market: ManagerProcess;
const dataDir = tempDir("cyclemarket-fair-");
// Its database is a clone on the run's shared PostgreSQL; this file runs alone (vitest.config.ts).
const database = await sharedDatabase();
// The market's default quotas, not the generous ones the other tests' one host needs.
const DEFAULT_QUOTAS = { QUOTES_PER_MINUTE: "120", SUBMISSIONS_PER_MINUTE: "30", QUEUED_TASKS_PER_USER: "50000" };
const machine = { name: "m", kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e9, pricePerSecond: 0.0001, userAgent: "test" };
const small = {
  name: "small",
  source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount: 1 },
  benefit: { kind: "constant", value: 1 },
};

async function tokenFor(email: string, scopes: ("produce" | "consume")[]) {
  const user = await signUp(market.url, email, ["consumer", "producer"], market.outbox);
  const { token } = await user.account.tokens.create.mutate({ name: "fair", scopes });
  return { authorization: `Bearer ${token}` };
}

/** The market's event-loop delay since /metrics was last read (its histogram restarts at each read). */
async function loopDelayMs() {
  const text = await (await fetch(`${market.url}/metrics`)).text();
  const seconds = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
  return { p99: Math.round(seconds("nodejs_eventloop_lag_p99_seconds") * 1000), max: Math.round(seconds("nodejs_eventloop_lag_max_seconds") * 1000) };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

beforeAll(async () => {
  market = await startManager({ dataDir, databaseUrl: database.url, leaseTimeoutMs: 30_000, env: { ...DEFAULT_QUOTAS, LOG_LEVEL: "info" } });
});
afterAll(async () => {
  await stopGently(market?.child);
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("fair service while one user submits huge jobs at the limit", () => {
  it("accepts 10,000-task jobs with 1 KB per task and keeps a bystander's calls quick", async () => {
    const abuser = await tokenFor("abuser@example.test", ["consume"]);
    const bystanders = await Promise.all(Array.from({ length: BYSTANDERS }, (_, i) => tokenFor(`bystander${i}@example.test`, ["consume", "produce"])));
    const bystander = bystanders[0]!;
    const wasm = moduleImporting("wasi_snapshot_preview1", "proc_exit");
    const upload = await fetch(`${market.url}/api/modules`, { method: "PUT", headers: abuser, body: new Uint8Array(wasm) });
    expect(upload.ok).toBe(true);
    const { hash } = (await upload.json()) as { hash: string };
    const stdin = Buffer.alloc(STDIN_BYTES, 7).toString("base64");
    const huge = (i: number) => ({
      name: `huge ${i}`,
      source: { kind: "module", moduleHash: hash, workPerTask: 0.01, tasks: Array.from({ length: TASKS }, () => ({ stdin })) },
      benefit: { kind: "constant", value: 20 },
    });
    // The abuser's requests are built before the bystander starts: building one (the JSON of
    // 10,000 tasks) holds this process, which the bystander's timings, taken in this same
    // process, would count against the market.
    const bodies = Array.from({ length: 6 }, (_, i) => Buffer.from(JSON.stringify(huge(i))));
    const bystanderJobs = await Promise.all(bystanders.map(async (b) => (await mutation(market.url, "jobs.submit", small, b)).json.result.data.jobId as string));

    const timings: Record<"quote" | "get" | "lease" | "heartbeat", number[]> = { quote: [], get: [], lease: [], heartbeat: [] };
    let machineId: string | null = null;
    let abusing = true;
    // This process's own delay: a bystander's call answered late because the test was busy is not the market's.
    const ownLoop = monitorEventLoopDelay({ resolution: 5 });
    ownLoop.enable();
    const time = async (kind: keyof typeof timings, call: () => Promise<{ status: number; text: string }>) => {
      const started = performance.now();
      const res = await call();
      timings[kind].push(performance.now() - started);
      expect(res.status, res.text.slice(0, 300)).toBe(200);
    };
    // The market's own event-loop delay over the abuse alone: reading /metrics starts its window afresh.
    await loopDelayMs();
    const window = { from: new Date() };
    const bystanderLoop = (who: number) => (async () => {
      const headers = bystanders[who]!;
      const jobId = bystanderJobs[who]!;
      await new Promise((r) => setTimeout(r, (600 * who) / BYSTANDERS)); // not all in step
      while (abusing) {
        await time("quote", () => mutation(market.url, "jobs.quote", small, headers));
        await time("get", () => send(`${market.url}/api/trpc/jobs.get?input=${encodeURIComponent(JSON.stringify({ jobId }))}`, { headers }));
        // The first bystander also sells: it leases and heartbeats on the one machine.
        if (machineId && who === 0) {
          await time("lease", () => mutation(market.url, "worker.lease", { machineId, max: 1 }, headers));
          await time("heartbeat", () => mutation(market.url, "worker.heartbeat", { machineId, leaseIds: [] }, headers));
        }
        // A bystander is an ordinary user: about one round a second keeps it within its own quotas
        // (120 quotes a minute), so every refusal it could meet is the abuser's doing.
        await new Promise((r) => setTimeout(r, 600));
      }
    })();
    const bystanderLoops = Promise.all(bystanders.map((_, who) => bystanderLoop(who)));

    const accepted: { ms: number; outcome: string }[] = [];
    const submitHuge = async (i: number) => {
      const started = performance.now();
      const res = await send(`${market.url}/api/trpc/jobs.submit`, { method: "POST", body: bodies[i], headers: { ...abuser, "content-type": "application/json" } });
      const ms = performance.now() - started;
      console.log(`huge job ${i}: HTTP ${res.status} in ${Math.round(ms)} ms: ${JSON.stringify(res.json?.result?.data?.decision?.reasons ?? res.json?.error?.data?.reason).slice(0, 300)}`);
      return { res, ms };
    };
    try {
      // Two wait as delayed jobs (no machine yet); the market re-evaluates them every second.
      for (let i = 0; i < 2; i++) {
        const { res, ms } = await submitHuge(i);
        expect(res.status, res.text.slice(0, 300)).toBe(200);
        accepted.push({ ms, outcome: res.json.result.data.decision.outcome });
      }
      expect(accepted.map((a) => a.outcome)).toEqual(["delayed", "delayed"]);
      // A machine arrives: the delayed jobs are admitted onto it while more arrive at the limit.
      machineId = (await mutation(market.url, "worker.register", machine, bystander)).json.result.data.machineId as string;
      for (let i = 2; i < 5; i++) {
        const { res, ms } = await submitHuge(i);
        expect(res.status, res.text.slice(0, 300)).toBe(200);
        accepted.push({ ms, outcome: res.json.result.data.decision.outcome });
      }
      // At the queued-tasks quota now: the next is refused at once, naming the limit.
      const over = await submitHuge(5);
      expect(over.res.status).toBe(429);
      expect(over.res.json.error.data.reason).toMatchObject({ limit: "queued-tasks-per-user" });
      // Cancelling a huge job is work of its own size; the bystander keeps going meanwhile.
      const victim = (await send(`${market.url}/api/trpc/jobs.list`, { headers: abuser })).json.result.data[0].id as string;
      const cancel = await mutation(market.url, "jobs.cancel", { jobId: victim }, abuser);
      expect(cancel.status, cancel.text.slice(0, 300)).toBe(200);
      // Its 10,000 unstarted tasks are failed after the answer, a chunk at a time.
      const victimTasks = async () => (await send(`${market.url}/api/trpc/jobs.get?input=${encodeURIComponent(JSON.stringify({ jobId: victim }))}`, { headers: abuser })).json.result.data;
      await expect.poll(async () => (await victimTasks()).tasks, { timeout: 30_000 }).toMatchObject({ pending: 0, queued: 0, failed: TASKS });
      expect((await victimTasks()).status).toBe("cancelled");
      await new Promise((r) => setTimeout(r, 2000)); // a few sweeps with the jobs in the market
    } finally {
      abusing = false;
      await bystanderLoops;
    }
    const loop = await loopDelayMs();
    ownLoop.disable();

    const all = Object.values(timings).flat().sort((a, b) => a - b);
    const figures = Object.fromEntries(
      Object.entries(timings).map(([k, v]) => {
        const s = [...v].sort((a, b) => a - b);
        return [k, { calls: s.length, p50: Math.round(percentile(s, 50)), p99: Math.round(percentile(s, 99)), max: Math.round(s.at(-1)!) }];
      }),
    );
    console.log(`10,000-task jobs with ${STDIN_BYTES} B of stdin per task, accepted in (ms): ${accepted.map((a) => `${Math.round(a.ms)} (${a.outcome})`).join(", ")}; goal ${ACCEPT_GOAL_MS} ms`);
    console.log(`bystander during the abuse: ${JSON.stringify(figures)}; ${all.length} calls of ${BYSTANDERS} users, p99 ${Math.round(percentile(all, 99))} ms, slowest ${Math.round(all.at(-1)!)} ms (bound ${BYSTANDER_P99_MS} ms)`);
    console.log(`market's event loop during the abuse (${window.from.toISOString()} to ${new Date().toISOString()}): delay p99 ${loop.p99} ms, longest ${loop.max} ms (bound ${LOOP_MAX_MS} ms)`);
    console.log(`the test's own event loop meanwhile: delay p99 ${Math.round(ownLoop.percentile(99) / 1e6)} ms, longest ${Math.round(ownLoop.max / 1e6)} ms; load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
    expect(accepted).toHaveLength(5);
    expect(timings.lease.length).toBeGreaterThan(0);
    expect(percentile(all, 99)).toBeLessThan(BYSTANDER_P99_MS);
    expect(loop.max).toBeLessThan(LOOP_MAX_MS);
  }, 300_000);
});

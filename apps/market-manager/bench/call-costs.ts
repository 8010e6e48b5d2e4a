// npx tsx apps/market-manager/bench/call-costs.ts [--machines M] [--calls N] [--concurrency C] [--json]
//
// What each kind of call the mixed load makes costs the Market Manager, alone: M machines
// registered (through the Node worker's own client), then N calls of one kind at a time, C in
// flight, and the manager's CPU time per call (user + system, from /proc). The kinds are the
// mixed load's: registration, heartbeat, a lease that finds nothing, a job page (`jobs.get`) of a
// job waiting for machines and of a completed job, a submission of a 20-task job, and an idle work
// stream's cost per second. `bench:dispatch` gives a task's own cost (lease, report, payment,
// settlement). Multiplying each by the mixed load's counts says where its CPU goes.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { args, clientFor, consumer, print, producerToken, round, startBenchManager, trivialJob, until } from "./harness.ts";
import { createTrpcApi } from "../../worker-runtime/src/node/trpc-api.ts";
import type { WorkerApi } from "../../worker-runtime/src/api.ts";

const opt = args({ machines: 1000, calls: 2000, concurrency: 50, jobTasks: 20 });
// Machines here do not heartbeat between phases: a long lease timeout keeps them from being departed.
const manager = await startBenchManager({ env: { LEASE_TIMEOUT_MS: "3600000" } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const profileDir = opt.profile ? join(process.cwd(), "profiles") : undefined;
if (profileDir) mkdirSync(profileDir, { recursive: true });

/** Runs `call` n times, c at once, and returns the manager's CPU ms per call and the wall time (with --profile, a profile of the phase: profiles/calls-KIND.cpuprofile). */
async function cost(kind: string, n: number, c: number, call: (i: number) => Promise<unknown>) {
  await sleep(500); // let the previous phase's tail settle
  if (profileDir) await manager.profileStart();
  const before = manager.cpu().managerMs;
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) await call(next++);
    }),
  );
  const wallMs = performance.now() - started;
  await sleep(200);
  if (profileDir) await manager.profileStop(join(profileDir, `calls-${kind}.cpuprofile`));
  return { cpuMsPerCall: round((manager.cpu().managerMs - before) / n, 3), callsPerSecond: round(n / (wallMs / 1000), 0), calls: n };
}

try {
  const producers = Math.ceil(opt.machines / 10);
  const tokens: string[] = [];
  for (let i = 0; i < producers; i++) tokens.push(await producerToken(manager, `seller${i}@bench.test`));
  const apis: WorkerApi[] = tokens.map((t) => createTrpcApi(manager.url, t));
  const machines: { api: WorkerApi; machineId: string }[] = [];
  const figures: Record<string, unknown> = { machines: opt.machines };

  figures.register = await cost("register", opt.machines, opt.concurrency, async (i) => {
    const api = apis[i % apis.length]!;
    const { machineId } = await api.register({ name: `m${i}`, kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 4096, bandwidthBytesPerSecond: 1e8, pricePerSecond: 0.0001, userAgent: "bench" });
    machines.push({ api, machineId });
  });
  // tRPC's own cost: a public query with no credentials and an answer from memory.
  const anonymous = clientFor(manager.url, {});
  figures.publicQuery = await cost("publicQuery", opt.calls, opt.concurrency, () => anonymous.jobs.examples.query());
  const machine = (i: number) => machines[i % machines.length]!;
  figures.heartbeat = await cost("heartbeat", opt.calls, opt.concurrency, (i) => machine(i).api.heartbeat({ machineId: machine(i).machineId, leaseIds: [] }));
  figures.emptyLease = await cost("emptyLease", opt.calls, opt.concurrency, (i) => machine(i).api.lease({ machineId: machine(i).machineId, max: 2 }));

  // Idle work streams: what holding them open costs per second, after they connected, beside
  // what the manager costs idle with the same machines and no streams.
  const idleMs = async (kind: string) => {
    await sleep(1000);
    if (profileDir) await manager.profileStart();
    const before = manager.cpu().managerMs;
    await sleep(10_000);
    const perSecond = round((manager.cpu().managerMs - before) / 10, 1);
    if (profileDir) await manager.profileStop(join(profileDir, `calls-${kind}.cpuprofile`));
    return perSecond;
  };
  figures.idleCpuMsPerSecond = await idleMs("idle");
  const closers: (() => void)[] = [];
  let live = 0;
  for (const m of machines) closers.push(m.api.watchWork!({ machineId: m.machineId }, { offer: () => {}, state: (s) => void (s === "live" && live++), end: () => {} }));
  await until("every work stream", () => live >= machines.length, 120_000);
  figures.idleWithWorkStreamsCpuMsPerSecond = await idleMs("idleWorkStreams");

  const buyers = await Promise.all(Array.from({ length: 10 }, (_, i) => consumer(manager, `buyer${i}@bench.test`)));
  const jobIds: string[] = [];
  figures.submit = await cost("submit", 50, 10, async (i) => {
    const { jobId } = await buyers[i % buyers.length]!.jobs.submit.mutate(trivialJob(`cost ${i}`, opt.jobTasks));
    jobIds[i] = jobId;
  });
  // Owners poll their own jobs: buyer k submitted jobs k, k + 10, ...
  const page = (i: number) => buyers[i % buyers.length]!.jobs.get.query({ jobId: jobIds[i % jobIds.length]! });
  figures.jobPageQueued = await cost("jobPageQueued", opt.calls, opt.concurrency, page);
  figures.jobsList = await cost("jobsList", opt.calls / 4, opt.concurrency, (i) => buyers[i % buyers.length]!.jobs.list.query());
  for (const close of closers) close();
  print(figures, opt.json);
} catch (e) {
  console.error(`call-costs stopped: ${e instanceof Error ? e.stack : String(e)}`);
  process.exitCode = 1;
} finally {
  await manager.stop();
}
process.exit(process.exitCode ?? 0);

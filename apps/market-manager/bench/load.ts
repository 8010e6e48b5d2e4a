// npm run -s bench:load -- --machines M --consumers C --seconds S [--slots N] [--jobTasks J] [--joinSeconds R] [--json] [--profile]
//
// A market under mixed load for S seconds: M simulated machines (ten to a producer) join over R
// seconds, each registering, heartbeating at the protocol's interval, holding its work stream,
// leasing and reporting; C consumers each submit a job of J trivial tasks, watch its page (one
// `jobs.get` a second, as the job page polls) until it completes, and submit the next. Prints the
// dispatch bench's figures plus the machines the market declared departed although they kept
// heartbeating, the manager's peak memory, and the books of every job that finished.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { args, consumer, print, producerToken, round, startBenchManager, startFleet, Timings, trivialJob, type Consumer } from "./harness.ts";

const opt = args({ machines: 100, consumers: 10, seconds: 60, slots: 2, jobTasks: 20, joinSeconds: 10, drainSeconds: 60 });
const profileDir = opt.profile ? join(process.cwd(), "profiles") : undefined;
if (profileDir) mkdirSync(profileDir, { recursive: true });

const manager = await startBenchManager(profileDir ? { profileDir } : {});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
try {
  const producers = Math.max(1, Math.ceil(opt.machines / 10));
  const tokens: string[] = [];
  for (let i = 0; i < producers; i++) tokens.push(await producerToken(manager, `seller${i}@bench.test`));
  const buyers: Consumer[] = [];
  for (let i = 0; i < opt.consumers; i++) buyers.push(await consumer(manager, `buyer${i}@bench.test`));

  const timings = new Timings();
  const firstLease = new Map<string, number>();
  const submittedAt = new Map<string, number>();
  let peakRss = 0;
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, manager.rssMb())), 1000);
  const cpuBefore = manager.cpu();
  const started = performance.now();
  const fleet = startFleet({
    url: manager.url,
    tokens,
    machines: opt.machines,
    slots: opt.slots,
    timings,
    staggerMs: (opt.joinSeconds * 1000) / opt.machines,
    onLease: (jobId, at) => {
      if (firstLease.has(jobId)) return;
      firstLease.set(jobId, at);
      const sent = submittedAt.get(jobId);
      if (sent !== undefined) timings.add("submitToLease", at - sent);
    },
  });

  const endAt = started + opt.seconds * 1000;
  const jobIds: string[] = [];
  const finished: string[] = [];
  const failures: string[] = [];
  let delayed = 0;
  async function shop(buyer: Consumer, who: number) {
    for (let n = 0; performance.now() < endAt; n++) {
      const sent = performance.now();
      let jobId: string;
      try {
        const answer = await buyer.jobs.submit.mutate(trivialJob(`load ${who}.${n}`, opt.jobTasks));
        jobId = answer.jobId;
        // Machines join over the first seconds, so a delayed job is expected early on: the market
        // asks again as machines arrive, and the job page is polled until the drain's end. A
        // rejected job will never run: its reasons are printed.
        if (answer.decision.outcome === "delayed") delayed++;
        if (answer.decision.outcome === "rejected") {
          if (failures.length < 10) failures.push(`job rejected: ${JSON.stringify(answer.decision.reasons)}`);
          await sleep(1000);
          continue;
        }
      } catch (e) {
        if (failures.length < 10) failures.push(`submit: ${e instanceof Error ? e.message : String(e)}`);
        await sleep(1000);
        continue;
      }
      timings.add("submit", performance.now() - sent);
      submittedAt.set(jobId, sent);
      jobIds.push(jobId);
      // The job page: one poll a second until the job is done (past the end, the drain waits).
      for (;;) {
        await sleep(1000);
        const t = performance.now();
        const view = await buyer.jobs.get.query({ jobId }).catch(() => null);
        timings.add("jobPage", performance.now() - t);
        if (view && (view.status === "completed" || view.status === "failed" || view.status === "rejected")) {
          if (view.status === "completed") finished.push(jobId);
          break;
        }
        if (performance.now() > endAt + opt.drainSeconds * 1000) break;
      }
    }
  }
  await Promise.all(buyers.map((b, i) => shop(b, i)));
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = manager.cpu();
  clearInterval(rssTimer);
  const accepted = fleet.accepted();
  const { books, departed } = await manager.audit(finished);
  await fleet.stop();
  const pick = (kind: string) => {
    const s = timings.summary(kind);
    return { p50: s.p50, p99: s.p99, count: s.count };
  };
  print(
    {
      machines: opt.machines,
      consumers: opt.consumers,
      seconds: round(seconds, 1),
      tasksPerSecond: round(accepted / seconds, 1),
      submitToLeaseMs: pick("submitToLease"),
      leaseMs: pick("lease"),
      reportMs: pick("report"),
      heartbeatMs: pick("heartbeat"),
      registerMs: pick("register"),
      submitMs: pick("submit"),
      jobPageMs: pick("jobPage"),
      managerCpuMsPerTask: accepted ? round((cpuAfter.managerMs - cpuBefore.managerMs) / accepted, 3) : null,
      postgresCpuMsPerTask: accepted ? round((cpuAfter.postgresMs - cpuBefore.postgresMs) / accepted, 3) : null,
      managerCpuCores: round((cpuAfter.managerMs - cpuBefore.managerMs) / 1000 / seconds, 2),
      departedWhileHeartbeating: departed,
      peakRssMb: round(peakRss, 0),
      jobs: { submitted: jobIds.length, delayedAtSubmission: delayed, completed: finished.length, unfinished: jobIds.length - finished.length },
      refusedReports: fleet.refused(),
      lost: books.lost,
      books,
      ...(failures.length || fleet.errors().length ? { errors: [...failures, ...fleet.errors()].slice(0, 8) } : {}),
    },
    opt.json,
  );
} catch (e) {
  console.error(`bench:load stopped: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  await manager.stop();
}
process.exit(process.exitCode ?? 0);

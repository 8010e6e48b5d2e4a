// npm run -s bench:history -- [--postings N] [--pastJobs K] [--jobs J] [--reads R] [--json]
//
// The pages' reads on a market with a long history: one producer paid N times (spread over the
// last 30 days, over J settled jobs it ran), their consumer with K finished jobs besides (over the
// same 30 days). Once PostgreSQL's autovacuum has counted the new rows (about a minute), R rounds
// over the real API of what the pages ask: the producer's earnings (`ledger.earnings`, every 30 s)
// and chart (`ledger.earningsSeries`), the consumer's balance (`ledger.balance`, every page's
// header, every few seconds) and jobs list (`jobs.list`), and the admin's market overview
// (`admin.overview`, pushed to the dashboard as the market changes). Prints each read's time and
// the manager's heap growth: a producer paid a few times a second (a few machines running short
// tasks) has hundreds of thousands of payments in a month, and a consumer submitting from a
// program as many jobs.
import { createHash } from "node:crypto";
import { startTestMarket } from "../../../test/support/market.ts";
import { args, print, round, Timings } from "./harness.ts";

const opt = args({ postings: 200_000, pastJobs: 100_000, jobs: 200, reads: 10 });
const market = await startTestMarket();
try {
  const db = market.manager.services.db;
  const consumer = await market.signUp("buyer@bench.test", ["consumer"]);
  const seller = await market.signUp("seller@bench.test", ["producer"]);
  const worker = market.tokenClient((await seller.account.tokens.create.mutate({ name: "rack" })).token);
  const { machineId } = await worker.worker.register.mutate({
    name: "rack", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "bench",
  });
  // Settled jobs for the payments to belong to: each run through the real protocol once.
  const jobIds: string[] = [];
  for (let j = 0; j < opt.jobs; j++) {
    const { jobId } = await consumer.jobs.submit.mutate({
      name: `job ${j}`,
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount: 1 },
      benefit: { kind: "constant", value: 50 },
    });
    jobIds.push(jobId);
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 1 });
    const stdout = Buffer.from("3 4\n");
    for (const lease of leases)
      await worker.worker.report.mutate({ machineId, leaseId: lease.leaseId, exitCode: 0, stdout: stdout.toString("base64"), stderr: "", outputHash: createHash("sha256").update(stdout).digest("hex"), elapsedMs: 20 });
  }
  // The rest of its payments written straight into the ledger (the ledger's ids are uuids, made
  // here from the row's number): an entry and a posting each, at
  // times spread over the last 30 days, for those jobs (the other side of each payment is left
  // out: the books do not balance, which these reads do not look at).
  const { ownerId } = await db.machine.findUniqueOrThrow({ where: { id: machineId }, select: { ownerId: true } });
  const account = await db.ledgerAccount.findUniqueOrThrow({ where: { kind_userId: { kind: "producer", userId: ownerId } }, select: { id: true } });
  const seeded = performance.now();
  const CHUNK = 50_000;
  for (let from = 0; from < opt.postings; from += CHUNK) {
    await db.$executeRawUnsafe(
      `WITH n AS (SELECT g, ($3::text[])[1 + g % cardinality($3::text[])] AS job, now() - (g::float8 / $5::float8) * interval '30 days' AS at FROM generate_series($1::int, $2::int) g),
       e AS (INSERT INTO "LedgerEntry" (id, kind, "uniqueKey", "jobId", memo, "createdAt") SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, 'payment', 'pay:bench-' || g, job, '{}'::jsonb, at FROM n RETURNING 1)
       INSERT INTO "LedgerPosting" (id, "entryId", "accountId", "amountMicro", "createdAt") SELECT ('00000000-0000-4000-9000-' || lpad(to_hex(g), 12, '0'))::uuid, ('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, $4::uuid, 1000 + g % 7, at FROM n`,
      from, Math.min(opt.postings, from + CHUNK) - 1, jobIds, account.id, opt.postings,
    );
  }
  // The consumer's finished jobs: copies of its first settled job, submitted over the last 30 days,
  // each with its escrow account, emptied at its settlement as a real one is.
  for (let from = 0; from < opt.pastJobs; from += CHUNK) {
    const [first, last] = [from, Math.min(opt.pastJobs, from + CHUNK) - 1];
    await db.$executeRawUnsafe(
      `INSERT INTO "Job" SELECT (jsonb_populate_record(NULL::"Job", to_jsonb(j) || jsonb_build_object('id', 'bench-job-' || g, 'name', 'past ' || g,
         'submittedAt', (now() - (g::float8 / $3::float8) * interval '30 days')::timestamp(3)))).* FROM "Job" j, generate_series($1::int, $2::int) g WHERE j.id = $4`,
      first, last, opt.pastJobs, jobIds[0],
    );
    await db.$executeRawUnsafe(
      `INSERT INTO "LedgerAccount" (id, kind, "jobId", "balanceMicro") SELECT ('00000000-0000-4000-a000-' || lpad(to_hex(g), 12, '0'))::uuid, 'escrow', 'bench-job-' || g, 0 FROM generate_series($1::int, $2::int) g`,
      first, last,
    );
  }
  const seedSeconds = (performance.now() - seeded) / 1000;
  // Read as a market's database would plan it: once autovacuum has counted the new rows (within
  // about a minute), not with the statistics of an empty ledger.
  const counted = async () => {
    const [row] = await db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE relname IN ('LedgerPosting', 'LedgerEntry', 'Job', 'LedgerAccount') AND coalesce(last_autoanalyze, last_analyze) > now() - $1::float8 * interval '1 second'`,
      (performance.now() - seeded) / 1000,
    );
    return row!.n === 4;
  };
  const waited = performance.now();
  while (!(await counted())) {
    if (performance.now() - waited > 180_000) throw new Error("autovacuum did not analyze the ledger and the jobs within 3 minutes");
    await new Promise((r) => setTimeout(r, 1000));
  }

  const { email, password } = market.manager.admin!;
  const admin = await market.signIn(email, password);
  const timings = new Timings();
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  /** One read, timed under `kind`, and the heap's peak after it. */
  const read = async <T>(kind: string, ask: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const answer = await ask();
    timings.add(kind, performance.now() - t);
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
    return answer;
  };
  let earned = 0;
  for (let r = 0; r < opt.reads; r++) {
    earned = (await read("earnings", () => seller.ledger.earnings.query())).earnedLastDay;
    await read("earningsSeries", () => seller.ledger.earningsSeries.query());
    await read("balance", () => consumer.ledger.balance.query());
    await read("jobsList", () => consumer.jobs.list.query());
    await read("adminOverview", () => admin.admin.overview.query());
  }
  const pick = (kind: string) => {
    const s = timings.summary(kind);
    return { p50: s.p50, max: s.max };
  };
  print(
    {
      postings: opt.postings,
      pastJobs: opt.pastJobs,
      jobs: opt.jobs,
      reads: opt.reads,
      seedSeconds: round(seedSeconds),
      earningsMs: pick("earnings"),
      earningsSeriesMs: pick("earningsSeries"),
      balanceMs: pick("balance"),
      jobsListMs: pick("jobsList"),
      adminOverviewMs: pick("adminOverview"),
      earnedLastDay: earned,
      heapGrowthMb: round((heapPeak - heapBefore) / 2 ** 20),
    },
    opt.json,
  );
} finally {
  await market.stop();
}
process.exit(0);

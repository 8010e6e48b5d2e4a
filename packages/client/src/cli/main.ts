// cyclemarket: the consumer's command line, on the SDK. Exit status: 0 the command did what it
// said (a job completed), 1 the job was rejected, failed or cancelled, 2 a usage or job-file
// mistake, 3 the market refused the request, 4 the market could not be reached or the token
// is missing, unknown or lacks the scope.
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { call, connect, type CycleMarket } from "../sdk/market.ts";
import { MarketError, marketError, networkCode } from "../sdk/errors.ts";
import { isFinal, type JobView, type Progress } from "../sdk/job.ts";
import { marketClient } from "../sdk/trpc.ts";
import { shortId } from "../job-file/index.ts";
import { readLogin, saveLogin } from "./config.ts";
import { describeDecisionReason, failureCauseWords, smallestAdmittedBenefit } from "./decision-words.ts";
import type { MarketReason } from "@cyclemarket/costbenefit";

export const EXIT = { ok: 0, jobNotCompleted: 1, usage: 2, refused: 3, unreachable: 4 } as const;

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
  /** Whether stderr is a terminal (a redrawn progress bar) or a log (a line per change). */
  tty: boolean;
}

const nodeIo: Io = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
  env: process.env,
  tty: Boolean(process.stderr.isTTY),
};

const USAGE = `Usage:
  cyclemarket quote JOBFILE [--url URL] [--token TOKEN]
  cyclemarket submit JOBFILE [--wait] [--out DIR] [--url URL] [--token TOKEN]
  cyclemarket status JOBID
  cyclemarket wait JOBID [--out DIR]
  cyclemarket results JOBID [--out DIR]
  cyclemarket jobfile JOBID > again.json
  cyclemarket cancel JOBID
  cyclemarket login --url URL --email EMAIL --password PASSWORD

JOBID is a job's id or its short id (its last 8 characters, as the pages show it).
results without --out lists each task's exit code, size and output hash; jobfile prints the
job file that submits the job again (its module named by hash, so it is not uploaded again).
URL is the web app's address or the Market Manager's. CYCLEMARKET_URL and CYCLEMARKET_TOKEN
stand for --url and --token; after \`cyclemarket login\` both may be left out.
Exit status: 0 done (job completed), 1 job rejected, failed or cancelled, 2 usage or job file
mistake, 3 refused by the market, 4 market unreachable or token not accepted.
`;

/** A mistake of the caller's; `withUsage` adds the usage text when the command line itself was wrong. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly withUsage = true,
  ) {
    super(message);
  }
}

const COMMANDS = new Set(["login", "quote", "submit", "status", "wait", "results", "jobfile", "cancel"]);

/** A reader that stops early (`cyclemarket results JOB | head`) ends the command quietly, not with EPIPE. */
let stdoutWatched = false;
function quietWhenStdoutCloses(): void {
  if (stdoutWatched) return;
  stdoutWatched = true;
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
    process.exit(process.exitCode ?? 0);
  });
}

export async function main(argv: string[], io: Io = nodeIo): Promise<number> {
  // Here, not in bin/: the repository's command and the packed one (scripts/pack.mjs) both run main.
  if (io === nodeIo) quietWhenStdoutCloses();
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: "string" },
        token: { type: "string" },
        email: { type: "string" },
        password: { type: "string" },
        out: { type: "string" },
        wait: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    io.err(`${(e as Error).message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const { values: flags, positionals } = parsed;
  const [command, target] = positionals;
  if (flags.help || !command) {
    (flags.help ? io.out : io.err)(USAGE);
    return flags.help ? EXIT.ok : EXIT.usage;
  }
  try {
    if (!COMMANDS.has(command)) throw new UsageError(`Unknown command ${JSON.stringify(command)}.`);
    if (command === "login") return await login(flags, io);
    if (!target) throw new UsageError(`${command} needs a ${command === "quote" || command === "submit" ? "job file" : "job id"}.`);
    // Before anything is sent: a job submitted with --out it cannot write would end in an error.
    if (flags.out && command !== "quote") prepareOut(flags.out);
    const market = connectFrom(flags, io);
    const jobId = () => fullJobId(market, target);
    switch (command) {
      case "quote":
        return await quote(market, target, io);
      case "submit":
        return await submit(market, target, { wait: Boolean(flags.wait || flags.out), out: flags.out }, io);
      case "status":
        return printStatus(await market.job(await jobId()).get(), io);
      case "wait":
        return await waitFor(market, await jobId(), { out: flags.out }, io);
      case "results": {
        if (!flags.out) return await listResults(market, await jobId(), io);
        const n = await market.job(await jobId()).download(flags.out);
        io.out(`${n} tasks' outputs written to ${flags.out}\n`);
        return EXIT.ok;
      }
      case "jobfile":
        io.out(JSON.stringify(await market.job(await jobId()).jobFile(), null, 2) + "\n");
        return EXIT.ok;
      case "cancel": {
        await market.job(await jobId()).cancel();
        io.out(`Job ${target} cancelled.\n`);
        return EXIT.ok;
      }
      default:
        throw new UsageError(`Unknown command ${JSON.stringify(command)}.`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(e.withUsage ? `${e.message}\n\n${USAGE}` : `cyclemarket: ${e.message}\n`);
      return EXIT.usage;
    }
    if (e instanceof MarketError) {
      const at = e.kind === "unreachable" ? marketUrl(flags, io) : undefined;
      io.err(`cyclemarket: ${e.message}${at ? ` (at ${at})` : ""}\n`);
      if (e.reason && /^job-file|input-file|no-lines|too-many-lines/.test(e.reason.code)) return EXIT.usage;
      return e.kind === "refused" ? EXIT.refused : EXIT.unreachable;
    }
    throw e;
  }
}

const marketUrl = (flags: { url?: string }, io: Io) => flags.url ?? io.env.CYCLEMARKET_URL ?? readLogin(io.env).url;

function connectFrom(flags: { url?: string; token?: string }, io: Io): CycleMarket {
  const saved = readLogin(io.env);
  const url = marketUrl(flags, io);
  const token = flags.token ?? io.env.CYCLEMARKET_TOKEN ?? saved.token;
  if (!url) throw new UsageError("Say which market: --url URL (or CYCLEMARKET_URL, or cyclemarket login).");
  checkUrl(url);
  if (!token) throw new UsageError("A consume token is needed: --token TOKEN (or CYCLEMARKET_TOKEN, or cyclemarket login).");
  return connect({ url, token });
}

/** The market's address must be an http(s) URL: "localhost:3000" alone would fail as "fetch failed". */
function checkUrl(url: string): void {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new UsageError(`The market's URL must start with http:// or https:// (got ${JSON.stringify(url)}), e.g. http://localhost:3000.`, false);
  }
}

/** Makes the --out folder, or says in words why it cannot be (a file by that name, no permission). */
function prepareOut(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new UsageError(`Cannot write the outputs to --out ${dir}: ${code === "ENOTDIR" || code === "EEXIST" ? "a file is in the way of that folder" : code === "EACCES" || code === "EPERM" ? "no permission" : (e as Error).message}.`, false);
  }
}

const FULL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A job id as given, or the one of the caller's latest jobs whose short id it is (the pages show short ids). */
async function fullJobId(market: CycleMarket, target: string): Promise<string> {
  if (FULL_ID.test(target)) return target;
  const jobs = await call(() => market.api.jobs.list.query());
  const match = jobs.filter((j) => shortId(j.id) === target.toLowerCase());
  if (match.length === 1) return match[0]!.id;
  throw new UsageError(match.length ? `${target} is the short id of ${match.length} of your jobs; give the whole id.` : `None of your latest jobs has the id ${target}.`, false);
}

/** An instant on the wire (milliseconds since the epoch) as the reader's local date and time. */
const when = (at: unknown) => (typeof at === "number" || typeof at === "string" ? new Date(at).toLocaleString() : "unknown");
/** Credits as the pages show them: to 3 decimals, and to 2 significant digits where that would read 0. */
const price = (credits: number) => (credits === 0 || Math.abs(credits) >= 0.0005 ? Number(credits.toFixed(3)) : Number(credits.toPrecision(2)));
const because = (reasons: MarketReason[]) => (reasons.length ? `: ${reasons.map(describeDecisionReason).join("; ")}` : "");

/** A decision on a job without a work estimate is provisional: it prices only the pilots. */
const provisionalPilots = (d: { provisional: boolean; pilots: number | null }) => (d.provisional ? (d.pilots ?? 0) : null);
const pilotWords = (pilots: number) =>
  `Provisional: the job gives no work per task, so this prices its first ${pilots} tasks as pilots, at the most a task can do within its wall-time limit; the rest is priced from their measured time once they finish.`;

async function quote(market: CycleMarket, path: string, io: Io): Promise<number> {
  const d = await market.quote(path);
  // With several Market Managers the quote is the best of their offers: say whose, and the others'.
  if (d.offers && d.offers.length > 1) {
    io.out(`Best of ${d.offers.length} Market Managers, offered by ${d.manager} (${d.offers.map((o) => `${o.manager}: ${o.outcome === "admitted" && o.price !== null ? `${price(o.price)} credits` : o.outcome}`).join(", ")}).\n`);
  }
  // No one manager admits it whole now: split across several, each running a range of its tasks.
  if (d.split) io.out(`Split across ${d.split.parts.length} Market Managers: ${d.split.parts.map((p) => `${p.manager} tasks ${p.fromTask}-${p.fromTask + p.tasks - 1} for ${price(p.price)} credits`).join(", ")}.\n`);
  if (d.outcome === "admitted") {
    io.out(`Would be admitted now: price ${price(d.price)} credits, expected completion ${when(d.completionAt)}; ${price(d.escrow)} of your ${price(d.balance)} credits held in escrow while it runs.\n`);
    if (provisionalPilots(d) !== null) io.out(`${pilotWords(provisionalPilots(d)!)}\n`);
    return EXIT.ok;
  }
  const short = d.reasons.find((r) => r.code === "insufficient-credits");
  if (short) {
    // Worth running, but the balance cannot escrow it: what it would cost and what is missing.
    io.out(`Not enough credits: ${describeDecisionReason(short)}.\n`);
    return EXIT.ok;
  }
  io.out(`Would be ${d.outcome} now${because(d.reasons)}.\n`);
  const smallest = smallestAdmittedBenefit(d.reasons);
  if (smallest !== null) io.out(`The smallest benefit admitted now: more than ${price(smallest)} credits.\n`);
  else io.out("No benefit would have it admitted now: what stops it is not its price.\n");
  return EXIT.ok;
}

/** What happens to a delayed job: without this, "delayed" and exit 0 read like a job that will run. */
const delayedWords = (givesUpAt: number | null) =>
  `The market asks again whenever machines or load change and admits it once it is worth running${givesUpAt === null ? "" : `; if it still is not by ${when(givesUpAt)}, it is rejected and nothing is charged`}.`;

async function submit(market: CycleMarket, path: string, opts: { wait: boolean; out?: string | undefined }, io: Io) {
  const job = await market.submit(path);
  const d = job.decision!;
  io.out(`Job ${job.id}: ${d.outcome}${d.outcome === "admitted" ? `, price ${price(d.price)} credits, expected by ${when(d.completionAt)}` : because(d.reasons)}.\n`);
  if (provisionalPilots(d) !== null) io.out(`${pilotWords(provisionalPilots(d)!)}\n`);
  if (d.outcome === "rejected") return EXIT.jobNotCompleted;
  if (d.outcome === "delayed") io.out(`${delayedWords((await job.get()).givesUpAt)}\n`);
  if (!opts.wait) return EXIT.ok;
  return waitFor(market, job.id, opts, io);
}

async function waitFor(market: CycleMarket, jobId: string, opts: { out?: string | undefined }, io: Io) {
  const job = market.job(jobId);
  const bar = progressBar(io);
  const final = await job.wait({ onProgress: bar });
  if (io.tty) io.err("\n");
  if (opts.out) {
    const n = await job.download(opts.out);
    io.out(`${n} tasks' outputs written to ${opts.out}\n`);
  }
  return printStatus(final, io);
}

/** One line per finished task: what `results --out` would write, without writing it. */
async function listResults(market: CycleMarket, jobId: string, io: Io): Promise<number> {
  const job = market.job(jobId);
  const view = await job.get();
  io.out("index\texit\tbytes\tsha256\tmachine\telapsed_ms\n");
  let n = 0;
  for await (const o of job.allOutputs()) {
    io.out(`${o.index}\t${o.exitCode}\t${o.stdout.length}\t${o.outputHash}\t${o.machine}\t${o.elapsedMs}\n`);
    n++;
  }
  io.err(`${n} of ${view.taskCount} tasks have output (${view.status}); --out DIR writes them.\n`);
  return EXIT.ok;
}

function printStatus(job: JobView, io: Io): number {
  const t = job.tasks;
  // A cancelled job's unfinished tasks are stored as failed; they were stopped, as its page says.
  const ended = job.status === "cancelled" ? "stopped" : "failed";
  io.out(`Job ${job.id} (${job.name}, short id ${shortId(job.id)}): ${job.status}, ${job.tasksDone}/${job.taskCount} tasks done (${t.queued + t.pending} waiting, ${t.leased} running, ${t.failed} ${ended}).\n`);
  if (job.charged !== null) io.out(`Charged ${price(job.charged)} credits.\n`);
  const w = job.workEstimate;
  if (w.kind === "provisional") io.out(`Work per task: provisional (${w.pilots} pilot tasks run first; the rest is planned from their measured time).\n`);
  if (w.kind === "measured") io.out(`Work per task: ${Number(w.workPerTask.toFixed(3))} s of reference CPU, measured by ${w.pilots} pilot tasks.\n`);
  const error = job.failure;
  if (job.status === "rejected") io.out(`Rejected${because(job.decision?.reasons ?? [])}.\n`);
  if (job.status === "delayed") io.out(`Delayed${because(job.decision?.reasons ?? [])}.\n${delayedWords(job.givesUpAt)}\n`);
  if (error) io.out(`Failed: ${describeFailure(error)}\n`);
  if (!isFinal(job.status) || job.status === "completed") return EXIT.ok;
  return EXIT.jobNotCompleted;
}

function describeFailure(error: MarketReason): string {
  if (error.code !== "task-failed") return describeDecisionReason(error);
  const stderr = error.stderr ? `\n${error.stderr}` : "";
  return `task ${error.taskIndex} failed after ${error.attempts} attempts: ${failureCauseWords(error)}.${stderr}`;
}

/** A bar redrawn in place on a terminal; in a log, one line each time another tenth is done. */
function progressBar(io: Io) {
  let lastTenth = -1;
  return (p: Progress) => {
    const done = p.tasksDone / Math.max(1, p.taskCount);
    const line = `${p.status.padEnd(9)} ${p.tasksDone}/${p.taskCount} done, ${p.tasks.leased} running, ${p.tasks.queued + p.tasks.pending} waiting`;
    if (io.tty) {
      const width = 30;
      const filled = Math.round(done * width);
      io.err(`\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${line}   `);
    } else if (Math.floor(done * 10) !== lastTenth || isFinal(p.status)) {
      lastTenth = Math.floor(done * 10);
      io.err(`${line}\n`);
    }
  };
}

async function login(flags: { url?: string; email?: string; password?: string }, io: Io): Promise<number> {
  const url = flags.url ?? io.env.CYCLEMARKET_URL;
  if (!url || !flags.email || !flags.password) throw new UsageError("login needs --url, --email and --password.");
  checkUrl(url);
  let res: Response;
  try {
    res = await fetch(`${url.replace(/\/+$/, "")}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: new URL(url).origin },
      body: JSON.stringify({ email: flags.email, password: flags.password }),
    });
  } catch (e) {
    throw new MarketError("unreachable", `Cannot reach the market: ${networkCode(e) ?? (e as Error).message}`);
  }
  if (!res.ok) throw new MarketError("unauthorized", res.status === 401 ? "Wrong email or password." : `Sign-in failed (HTTP ${res.status}).`);
  const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const api = marketClient(url, { cookie, origin: new URL(url).origin });
  let token: string;
  try {
    token = (await api.account.tokens.create.mutate({ name: `cyclemarket on ${hostname()}`, scopes: ["consume"] })).token;
  } catch (e) {
    throw marketError(e);
  }
  const file = saveLogin({ url, token, email: flags.email }, io.env);
  io.out(`Signed in as ${flags.email}; a consume token is kept in ${file}.\n`);
  return EXIT.ok;
}

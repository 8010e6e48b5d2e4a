// cyclemarket-worker: sells this machine's cycles to a market. Benchmarks the machine,
// registers it, runs leased tasks on a worker_threads pool until SIGINT or SIGTERM, then
// departs so its unfinished tasks go straight back to the market.
import { availableParallelism, freemem, hostname, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { z } from "zod";
import { runProducer, type ProducerEvent } from "../producer.ts";
import { createNodePool } from "./pool.ts";
import { createTrpcApi } from "./trpc-api.ts";
import { createCpuLoadActivity } from "./cpu-load.ts";
import { ManagerChoiceFlag, runOfferedToSeveral } from "./several-managers.ts";
import { MachineControlsPatch, type MachineControlsPatch as ControlsPatch } from "../controls/machine-controls.ts";

const USAGE = `usage: cyclemarket-worker --url <market url> --token <api token> [options]

  --url URL          the market's address, e.g. http://localhost:3000
  --token TOKEN      an API token with the produce scope, made on the market's
                     Account page (or set CYCLEMARKET_WORKER_TOKEN)
  --slots N          tasks to run at once (default: cores - 1, at least 1)
  --name NAME        how the machine is listed (default: host name)
  --price P          credits asked per second of successful use (default 1)
  --kind KIND        opportunistic (default) or dedicated
  --hours H          dedicated: hours the machine stays in the market
  --contract C       dedicated: total credits asked for those hours; the market
                     accepts or refuses the offer at once
  --bandwidth B      bandwidth to the market in bytes per second (default 12500000)
  --managers WHICH   a market of several Market Managers: offer this machine to several
                     at once, "all" of the live ones, the N with the most room (a number),
                     or those named (ids, comma-separated). Each holds the machine as its
                     own, leases to it and pays for its results; the worker asks each for
                     at most its free slots, so together they never give it more tasks
                     than --slots. The live managers are read again every few seconds:
                     one that joins is offered the machine too (under "all", when named,
                     or to keep N), one that died no longer is. Opportunistic machines
                     only (a dedicated contract with several would pay the same hours
                     more than once)

Producer controls (kept by the market on this machine's record; the /produce page
shows them, and can pause, resume or change them while the worker runs):
  --paused           join the market paused: in it, but taking no task until resumed
  --hand-back WHEN   when the machine pauses or switches off: "finish" (default) lets
                     leased tasks finish; "now" hands them back to the market at once
  --cpu-limit PCT    percentage of each core the market may use, 1 to 100 (default 100).
                     Kept inside each task: every 100 ms it computes, a task rests
                     100 x (100 - PCT) / PCT ms (rests do not count against its wall
                     time); the market is offered speed x PCT / 100 per slot
  --only-idle        work only while the rest of this machine is quiet (see --idle-load)
  --idle-load SHARE  with --only-idle: the machine counts as in use while other
                     processes use more than this share of all cores, 0 to 1 (default 0.3),
                     measured over the last 2 seconds without this worker's own CPU time
  --schedule TEXT    work only in these hours of the machine's local time, e.g.
                     "Mon-Fri 18:00-08:00; Sat,Sun 00:00-24:00" (a range that ends before
                     it starts runs past midnight)
  --max-task-memory MB  the most memory one task may have (at least 16); the market
                     places no larger task here
  --quiet            print only errors
  --help             show this text`;

const Flags = z.object({
  url: z.url({
    protocol: /^https?$/,
    error: (issue) =>
      issue.input === undefined ? "--url is required: the market's web address, e.g. http://localhost:3000" : "--url must be an http(s) URL, e.g. http://localhost:3000",
  }),
  token: z.string({ error: "--token is required (or set CYCLEMARKET_WORKER_TOKEN)" }).min(1, "--token must not be empty"),
  slots: z.coerce
    .number({ error: "--slots must be a number" })
    .int("--slots must be a whole number")
    .min(1, "--slots must be at least 1")
    .max(256, "--slots must be at most 256")
    .default(Math.max(1, availableParallelism() - 1)),
  name: z.string().min(1).max(80, "--name must be at most 80 characters").default(hostname()),
  price: z.coerce.number({ error: "--price must be a number" }).min(0, "--price must not be negative").default(1),
  kind: z.enum(["opportunistic", "dedicated"], { error: "--kind must be opportunistic or dedicated" }).default("opportunistic"),
  bandwidth: z.coerce.number({ error: "--bandwidth must be a number" }).positive("--bandwidth must be positive").default(12_500_000),
  hours: z.coerce.number({ error: "--hours must be a number" }).positive("--hours must be positive").max(24 * 365, "--hours must be at most a year").optional(),
  contract: z.coerce.number({ error: "--contract must be a number" }).min(0, "--contract must not be negative").optional(),
  managers: ManagerChoiceFlag.optional(),
  quiet: z.boolean().default(false),
  controls: MachineControlsPatch,
})
  .refine((f) => f.kind !== "dedicated" || (f.hours !== undefined && f.contract !== undefined), {
    message: "a dedicated machine needs --hours and --contract",
  })
  .refine((f) => f.kind !== "dedicated" || f.managers === undefined, {
    message: "--managers offers an opportunistic machine only: a dedicated contract with several managers would pay the same hours more than once",
  });
export type Flags = z.infer<typeof Flags>;

// The only place this app reads the environment.
const Env = z.object({ CYCLEMARKET_WORKER_TOKEN: z.string().min(1).optional() });

export type ParsedCommand = { ok: true; flags: Flags } | { ok: false; help: boolean; message: string };

export function parseCommand(argv: string[], env: Record<string, string | undefined>): ParsedCommand {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        url: { type: "string" },
        token: { type: "string" },
        slots: { type: "string" },
        name: { type: "string" },
        price: { type: "string" },
        kind: { type: "string" },
        bandwidth: { type: "string" },
        hours: { type: "string" },
        contract: { type: "string" },
        managers: { type: "string" },
        paused: { type: "boolean" },
        "hand-back": { type: "string" },
        "cpu-limit": { type: "string" },
        "only-idle": { type: "boolean" },
        "idle-load": { type: "string" },
        schedule: { type: "string" },
        "max-task-memory": { type: "string" },
        quiet: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    return { ok: false, help: false, message: e instanceof Error ? e.message : String(e) };
  }
  if (values.help) return { ok: false, help: true, message: USAGE };
  const { help: _help, paused, "hand-back": handBack, "cpu-limit": cpuLimit, "only-idle": onlyIdle, "idle-load": idleLoad, schedule, "max-task-memory": maxTaskMemoryMb, ...rest } = values;
  const controls: Record<string, unknown> = { paused, handBack, onlyIdle, schedule, cpuLimit: flagNumber(cpuLimit), idleLoad: flagNumber(idleLoad), maxTaskMemoryMb: flagNumber(maxTaskMemoryMb) };
  for (const key of Object.keys(controls)) if (controls[key] === undefined) delete controls[key];
  const parsed = Flags.safeParse({ ...rest, controls, token: rest.token ?? Env.parse(env).CYCLEMARKET_WORKER_TOKEN });
  if (!parsed.success) return { ok: false, help: false, message: parsed.error.issues.map((i) => i.message).join("\n") };
  return { ok: true, flags: parsed.data };
}

/** A number flag as a number, so the controls' schema names its limit; text that is not a number stays text and is refused. */
const flagNumber = (text: string | undefined) => (text === undefined ? undefined : text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text);

const OFF_WORDS = { paused: "paused", schedule: "outside its schedule", "in-use": "this machine is in use" } as const;

function describeControls(c: ControlsPatch): string {
  const parts = [
    c.cpuLimit !== undefined && c.cpuLimit < 100 ? `CPU limit ${c.cpuLimit}%` : null,
    c.onlyIdle ? `only while other load < ${Math.round((c.idleLoad ?? 0.3) * 100)}%` : null,
    c.schedule ? `schedule "${c.schedule}"` : null,
    c.maxTaskMemoryMb ? `at most ${c.maxTaskMemoryMb} MB per task` : null,
  ].filter(Boolean);
  return parts.length ? parts.join(", ") : "no limits";
}

function describe(event: ProducerEvent): string | null {
  switch (event.type) {
    case "registered":
      return `registered as machine ${event.machineId} with ${event.slots} slots`;
    case "leased":
      return `leased ${event.leases.length} task(s)`;
    case "started":
      return null;
    case "finished":
      return `task ${event.taskId} finished in ${event.elapsedMs.toFixed(0)} ms, exit ${event.exitCode}${event.error ? ` (${event.error.code}: ${event.error.message})` : ""}`;
    case "reported":
      return event.accepted ? null : `report for task ${event.taskId} refused: ${event.reason?.code ?? "no reason given"}`;
    case "abandoned":
      return `task ${event.taskId} given up (${event.reason === "expired" ? "its lease expired" : event.reason === "handed-back" ? "handed back to the market" : "stopping"})`;
    case "idle":
      return null;
    case "stream":
      return event.state === "live"
        ? "listening for work: the market says when it has some"
        : event.state === "reconnecting"
          ? "work stream dropped; asking for work on a timer while it reconnects"
          : "work stream closed; asking for work on a timer";
    case "error":
      return `error while trying to ${event.stage}: ${event.message}`;
    case "departed":
      return `departed from the market`;
    case "market":
      return event.reachable ? "the market answers again" : "the market is not answering; running tasks go on and their results are kept until it is back";
    case "capacity":
      return event.offering
        ? `offering capacity (${describeControls(event.controls)})`
        : `capacity off: ${OFF_WORDS[event.reason ?? "paused"]}; taking no task${event.controls.handBack === "now" ? ", leased tasks handed back" : ", leased tasks finish"}`;
  }
}

export async function main(argv: string[]): Promise<number> {
  const command = parseCommand(argv, process.env);
  if (!command.ok) {
    if (command.help) {
      console.log(command.message);
      return 0;
    }
    // The mistake alone, not buried above forty lines of options.
    console.error(`cyclemarket-worker: ${command.message}\nRun it with --help for every option.`);
    return 2;
  }
  const { flags } = command;
  const log = (line: string) => console.log(`[cyclemarket-worker] ${line}`);

  const controller = new AbortController();
  const stop = (signal: string) => {
    if (controller.signal.aborted) return;
    log(`${signal}: departing`);
    controller.abort();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));

  const pool = createNodePool({ slots: flags.slots });
  try {
    const bench = await pool.benchmark();
    if (!flags.quiet) log(`benchmark: speed ${bench.speed.toFixed(2)} per slot (${(bench.rate / 1e6).toFixed(1)} M kernel iterations/s)`);
    const memoryPerSlotMb = Math.max(16, Math.min(4096, Math.floor(Math.min(freemem(), totalmem() / 2) / 2 ** 20 / flags.slots)));
    const common = {
      executor: pool,
      slots: flags.slots,
      signal: controller.signal,
      controls: flags.controls,
      // Always watched, so "only while idle" works when the /produce page turns it on later.
      ownerActivity: createCpuLoadActivity(),
      machine: {
        name: flags.name,
        kind: flags.kind,
        speed: bench.speed,
        memoryPerSlotMb,
        bandwidthBytesPerSecond: flags.bandwidth,
        pricePerSecond: flags.price,
        ...(flags.kind === "dedicated" ? { departsAt: Date.now() + Math.round(flags.hours! * 3_600_000), contractPrice: flags.contract } : {}),
        userAgent: `cyclemarket-worker node/${process.versions.node} ${process.platform}-${process.arch}`,
      },
    };
    const show = (prefix: string) => (event: ProducerEvent) => {
      const line = describe(event);
      if (line && (!flags.quiet || event.type === "error")) log(prefix + line);
    };
    const summaries = flags.managers
      ? await runOfferedToSeveral({
          ...common,
          url: flags.url,
          token: flags.token,
          choice: flags.managers,
          onManagers: (ids) => flags.quiet || log(`offering this machine to ${ids.length} Market Manager(s) at once: ${ids.join(", ")}`),
          onEvent: (managerId, event) => show(`${managerId}: `)(event),
        })
      : [await runProducer({ ...common, api: createTrpcApi(flags.url, flags.token), onEvent: show("") })];
    const run = summaries.reduce((n, s) => n + s.tasksRun, 0);
    const accepted = summaries.reduce((n, s) => n + s.reportsAccepted, 0);
    if (!flags.quiet) log(`ran ${run} task(s), ${accepted} accepted`);
    return 0;
  } catch (e) {
    console.error(`cyclemarket-worker: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    await pool.close();
  }
}

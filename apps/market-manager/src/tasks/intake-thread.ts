import { parentPort, workerData } from "node:worker_threads";
import pg from "pg";
import { z } from "zod";
import { Refusal } from "../api/errors.ts";
import { insertTasks } from "./intake.ts";
import { onConnection } from "../db/sql/runners.ts";
import { SubmitJob, headOf, prepareSubmission, rowsOf, type TaskInputs, type PlannedTask } from "./submission.ts";
import type { IntakeAnswer, IntakeAsk } from "./intake-pool.ts";

// An intake thread: parses and checks a submission's request body and writes its tasks with a
// connection of its own, so that a 10,000-task job (megabytes of JSON) never holds the market's
// thread. The market's thread gets back only what the engine needs (intake-pool.ts).

const { databaseUrl } = workerData as { databaseUrl: string };
// One connection: a thread writes one job's tasks at a time, chunk after chunk.
const db = new pg.Pool({ connectionString: databaseUrl, max: 1, idleTimeoutMillis: 10_000 });
db.on("error", () => {}); // an idle connection that drops is opened again on the next job
const port = parentPort!;

/** Prepared submissions waiting for the market's answer, by handle: their inputs stay here. */
const held = new Map<number, { tasks: PlannedTask[]; inputs: TaskInputs[]; timer: NodeJS.Timeout }>();
let nextHandle = 1;
/** A submission the market never came back for (its caller went away) is let go after this. */
const HOLD_MS = 5 * 60_000;

function prepare(ask: Extract<IntakeAsk, { op: "prepare" }>): IntakeAnswer {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(ask.body));
  } catch {
    return { id: ask.id, ok: false, kind: "parse", message: "The request body is not valid JSON." };
  }
  // A batched call (the web app's client) carries its input under "0".
  const raw = ask.batch && body && typeof body === "object" ? (body as Record<string, unknown>)["0"] : body;
  const parsed = SubmitJob.safeParse(raw);
  if (!parsed.success) return { id: ask.id, ok: false, kind: "invalid", issues: parsed.error.issues };
  try {
    const { job, inputs } = prepareSubmission(parsed.data, ask.maxModuleBytes);
    let handle: number | null = null;
    if (ask.keep) {
      handle = nextHandle++;
      const h = handle;
      held.set(h, { tasks: job.tasks, inputs, timer: setTimeout(() => held.delete(h), HOLD_MS).unref() });
    }
    const ids = job.tasks.map((t) => t.id);
    const bytes = Int32Array.from(job.tasks, (t) => t.bytes);
    // A fresh copy of the module: a small decoded one may share Node's buffer pool, which must not move.
    const moduleBytes = job.moduleBytes ? new Uint8Array(job.moduleBytes) : null;
    return { id: ask.id, ok: true, handle, head: headOf(parsed.data), job: { ...job, moduleBytes, tasks: [] }, ids, bytes };
  } catch (e) {
    if (e instanceof Refusal) return { id: ask.id, ok: false, kind: "refusal", code: e.code as Extract<IntakeAnswer, { kind: "refusal" }>["code"], reason: e.reason, message: e.message };
    if (e instanceof z.ZodError) return { id: ask.id, ok: false, kind: "invalid", issues: e.issues };
    throw e;
  }
}

async function store(ask: Extract<IntakeAsk, { op: "store" }>): Promise<IntakeAnswer> {
  const entry = held.get(ask.handle);
  if (!entry) return { id: ask.id, ok: false, kind: "error", message: "The submission is no longer held by its intake thread." };
  held.delete(ask.handle);
  clearTimeout(entry.timer);
  await insertTasks(onConnection(db), ask.jobId, rowsOf(entry.tasks, entry.inputs, ask.replicas));
  return { id: ask.id, ok: true };
}

port.on("message", (ask: IntakeAsk) => {
  if (ask.op === "drop") {
    clearTimeout(held.get(ask.handle)?.timer);
    held.delete(ask.handle);
    return;
  }
  if (ask.op === "close") return void db.end().finally(() => port.close());
  const answer = ask.op === "prepare" ? Promise.resolve().then(() => prepare(ask)) : store(ask);
  answer.then(
    (a) => {
      const transfer = a.ok && "job" in a ? [a.bytes.buffer, ...(a.job.moduleBytes ? [a.job.moduleBytes.buffer] : [])] : [];
      port.postMessage(a, transfer as ArrayBuffer[]);
    },
    (e: unknown) => port.postMessage({ id: ask.id, ok: false, kind: "error", message: e instanceof Error ? e.message : String(e) } satisfies IntakeAnswer),
  );
});

import { Worker } from "node:worker_threads";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { Refusal, type Reason } from "../api/errors.ts";
import type { Market } from "../market/market.ts";
import type { PreparedJob, SubmissionHead } from "./submission.ts";

// The market's side of the intake threads (intake-thread.ts). A submission over HTTP is parsed,
// checked and expanded there; the market's thread gets its head (name, curve, replicas), the
// module's hash and one id and input size per task: what the engine decides on. The tasks'
// inputs stay in the thread until the market stores the job (`StagedSubmission.store`).

export type IntakeAsk =
  | { op: "prepare"; id: number; body: Uint8Array; batch: boolean; maxModuleBytes: number; keep: boolean }
  | { op: "store"; id: number; handle: number; jobId: string; replicas: number }
  | { op: "drop"; handle: number }
  | { op: "close" };

type Asked = IntakeAsk extends infer A ? (A extends { id: number } ? Omit<A, "id"> : never) : never;
type Prepared = { id: number; ok: true; handle: number | null; head: SubmissionHead; job: PreparedJob; ids: string[]; bytes: Int32Array };
export type IntakeAnswer =
  | Prepared
  | { id: number; ok: true }
  | { id: number; ok: false; kind: "parse" | "error"; message: string }
  | { id: number; ok: false; kind: "invalid"; issues: z.core.$ZodIssue[] }
  | { id: number; ok: false; kind: "refusal"; code: ConstructorParameters<typeof Refusal>[0]; reason: Reason; message: string };

/** Threads per market at most: a second keeps one big job from waiting behind another's rows. */
const THREADS = 2;

class IntakeThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, (a: IntakeAnswer) => void>();
  private nextId = 1;
  dead = false;

  constructor(databaseUrl: string) {
    // The market runs its TypeScript sources through tsx; a thread registers it for itself.
    const require = createRequire(import.meta.url);
    // Its ESM entry: the CommonJS one, imported from a thread, does not find its own files.
    const tsx = pathToFileURL(require.resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs")).href;
    const entry = new URL("./intake-thread.ts", import.meta.url).href;
    const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
    this.worker = new Worker(boot, { eval: true, workerData: { databaseUrl } });
    this.worker.unref();
    this.worker.on("message", (a: IntakeAnswer) => {
      const resolve = this.waiting.get(a.id);
      this.waiting.delete(a.id);
      resolve?.(a);
    });
    const fail = (message: string) => {
      this.dead = true;
      for (const [id, resolve] of this.waiting) resolve({ id, ok: false, kind: "error", message });
      this.waiting.clear();
    };
    this.worker.on("error", (e) => fail(`intake thread failed: ${e.message}`));
    this.worker.on("exit", (code) => fail(`intake thread exited (${code})`));
  }

  get load() {
    return this.waiting.size;
  }

  ask(ask: Asked, transfer: ArrayBuffer[] = []): Promise<IntakeAnswer> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.worker.postMessage({ ...ask, id }, transfer);
    });
  }

  tell(ask: Extract<IntakeAsk, { op: "drop" | "close" }>) {
    if (!this.dead) this.worker.postMessage(ask);
  }
}

/** A submission prepared by an intake thread: its head and plan here, its tasks' inputs there. */
export class StagedSubmission {
  private settled = false;
  constructor(
    readonly head: SubmissionHead,
    readonly job: PreparedJob,
    private readonly thread: IntakeThread,
    private readonly handle: number | null,
  ) {}

  /** Writes every copy of every task (intake state, see intake.ts) with the thread's own connection. */
  async store(jobId: string, replicas: number): Promise<void> {
    if (this.handle === null || this.settled) throw new Error("this submission was not kept for storing");
    this.settled = true;
    const a = await this.thread.ask({ op: "store", handle: this.handle, jobId, replicas });
    if (!a.ok) throw new Error(`storing the tasks failed: ${"message" in a ? a.message : "?"}`);
  }

  /** The thread lets the inputs go: the job was refused before it was stored. */
  drop(): void {
    if (this.handle === null || this.settled) return;
    this.settled = true;
    this.thread.tell({ op: "drop", handle: this.handle });
  }
}

export class IntakePool {
  private threads: IntakeThread[] = [];
  constructor(private readonly databaseUrl: string) {}

  /** The least busy thread; a second is started once the only one is busy (it answers from the next call on). */
  private pick(): IntakeThread {
    this.warm();
    const least = this.threads.reduce((a, b) => (b.load < a.load ? b : a));
    if (least.load > 0 && this.threads.length < THREADS) this.threads.push(new IntakeThread(this.databaseUrl));
    return least;
  }

  /**
   * Starts one thread (loading its modules takes it long) unless one runs: when a body that will
   * be held begins to arrive (http/held-body.ts), so that the thread loads while it does, and
   * again after one failed. A market that never takes a big job never starts one.
   */
  warm(): this {
    this.threads = this.threads.filter((t) => !t.dead);
    if (this.threads.length === 0) this.threads.push(new IntakeThread(this.databaseUrl));
    return this;
  }

  /**
   * Parses and checks a request body (`keep`: its tasks are held for `store`); a bad one is
   * refused as the API refuses any input, naming the field and its limit.
   */
  async prepare(body: Uint8Array, o: { batch: boolean; maxModuleBytes: number; keep: boolean }): Promise<StagedSubmission> {
    const thread = this.pick();
    const a = await thread.ask({ op: "prepare", body, ...o }, [body.buffer as ArrayBuffer]);
    if (a.ok && "head" in a) {
      const tasks = a.ids.map((id, i) => ({ id, bytes: a.bytes[i]! }));
      return new StagedSubmission(a.head, { ...a.job, tasks }, thread, a.handle);
    }
    if (a.ok) throw new Error("unexpected answer from an intake thread");
    // The error `parse` throws (an Error, unlike `ZodError`): the API renders its issues (public-error.ts).
    if (a.kind === "invalid") throw new TRPCError({ code: "BAD_REQUEST", cause: new z.ZodRealError(a.issues) });
    if (a.kind === "refusal") throw new Refusal(a.code, a.reason, a.message);
    if (a.kind === "parse") throw new TRPCError({ code: "PARSE_ERROR", message: a.message });
    throw new Error(a.message);
  }

  close() {
    for (const t of this.threads) t.tell({ op: "close" });
    this.threads = [];
  }
}

/** The market's intake threads (market.resources), started on the first submission. */
export function intakePoolOf(market: Market): IntakePool {
  return (market.resources.intakePool ??= new IntakePool(market.resources.database.url));
}

/** Stops the intake threads of a market that is stopping. */
export function closeIntake(market: Market) {
  market.resources.intakePool?.close();
  market.resources.intakePool = undefined;
}

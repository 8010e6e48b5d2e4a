import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fromBase64, type JobFileInput } from "../job-file/index.ts";
import type { CycleMarket } from "./market.ts";
import { call } from "./market.ts";
import { marketError } from "./errors.ts";
import type { Cancelled, Decision, JobView, OutputRow } from "./wire.ts";

export type { Cancelled, Decision, JobView } from "./wire.ts";

/**
 * What the SDK needs of an AbortSignal (Node's and a browser's fit it), written out so these
 * declarations need neither the DOM's types nor Node's.
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** How a job ended: completed is success; the others are not. */
export const FINAL_STATUSES = ["completed", "failed", "cancelled", "rejected"] as const;
export const isFinal = (status: string) => (FINAL_STATUSES as readonly string[]).includes(status);

/** One task's accepted output, as bytes. */
export interface TaskOutput {
  index: number;
  args: string[];
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
  outputHash: string;
  elapsedMs: number;
  machine: string;
}

export interface Progress {
  status: string;
  tasksDone: number;
  taskCount: number;
  tasks: JobView["tasks"];
  job: JobView;
}

const PAGE = 500;

/** A submitted job: follow it, wait for it, cancel it, read its outputs. */
export class JobHandle {
  constructor(
    private readonly market: CycleMarket,
    readonly id: string,
    /** The market's decision at submission (null for a handle made from a job id). */
    readonly decision: Decision | null,
  ) {}

  get(): Promise<JobView> {
    return call(() => this.market.api.jobs.get.query({ jobId: this.id }));
  }

  /**
   * The job's progress each time its status or task counts change, until the job ends (the last
   * one is final). The market pushes it (server-sent events): nothing is polled.
   */
  async *progress(options: { signal?: AbortSignalLike } = {}): AsyncGenerator<Progress> {
    const views = follow<JobView>((h) => this.market.api.jobs.watch.subscribe({ jobId: this.id }, h), options.signal);
    for await (const job of views) {
      yield { status: job.status, tasksDone: job.tasksDone, taskCount: job.taskCount, tasks: job.tasks, job };
      if (isFinal(job.status)) return;
    }
  }

  /** Resolves when the job has ended, with its final view. */
  async wait(options: { signal?: AbortSignalLike; onProgress?: (p: Progress) => void } = {}): Promise<JobView> {
    let final: JobView | null = null;
    for await (const p of this.progress(options)) {
      options.onProgress?.(p);
      final = p.job;
    }
    return final ?? this.get();
  }

  /** The job file that submits this job again: its module named by hash (not uploaded again), every task written out. */
  jobFile(): Promise<JobFileInput> {
    return call(() => this.market.api.jobs.jobFile.query({ jobId: this.id })) as Promise<JobFileInput>;
  }

  cancel(): Promise<Cancelled> {
    return call(() => this.market.api.jobs.cancel.mutate({ jobId: this.id }));
  }

  /** Accepted outputs from task `fromIndex` on, one page (at most `limit` tasks, or 8 MiB). */
  async outputs(fromIndex = 0, limit = PAGE): Promise<TaskOutput[]> {
    const rows = await call(() => this.market.api.jobs.outputs.query({ jobId: this.id, fromIndex, limit }));
    return rows.map(taskOutput);
  }

  /** Every accepted output so far, in index order. */
  async *allOutputs(): AsyncGenerator<TaskOutput> {
    let from = 0;
    for (;;) {
      const page = await this.outputs(from);
      if (!page.length) return;
      yield* page;
      from = page[page.length - 1]!.index + 1;
    }
  }

  /**
   * Each task's output as bytes, as the market accepts it (in that order, not by index), until
   * the job ends. The market pushes them (server-sent events); a dropped connection is made
   * again and resumes where it was, and no task is yielded twice.
   */
  async *results(options: { signal?: AbortSignalLike } = {}): AsyncGenerator<TaskOutput> {
    const seen = new Set<number>();
    const events = follow<{ data: OutputEvent }>((h) => this.market.api.jobs.streamOutputs.subscribe({ jobId: this.id }, h), options.signal);
    for await (const { data } of events) {
      if (data.kind === "end") return;
      if (seen.has(data.output.index)) continue;
      seen.add(data.output.index);
      yield taskOutput(data.output);
    }
  }

  /**
   * Writes each accepted task's stdout as raw bytes to `dir/<index>.out`, its stderr to
   * `dir/<index>.err`, and `dir/results.json` (per task: index, args, exit code, output hash,
   * machine, elapsed). Returns how many tasks were written.
   */
  async download(dir: string): Promise<number> {
    mkdirSync(dir, { recursive: true });
    const manifest = [];
    for await (const o of this.allOutputs()) {
      writeFileSync(join(dir, `${o.index}.out`), o.stdout);
      writeFileSync(join(dir, `${o.index}.err`), o.stderr);
      manifest.push({ index: o.index, args: o.args, exitCode: o.exitCode, outputHash: o.outputHash, bytes: o.stdout.length, machine: o.machine, elapsedMs: o.elapsedMs });
    }
    writeFileSync(join(dir, "results.json"), JSON.stringify({ job: { id: this.id }, tasks: manifest }, null, 2) + "\n");
    return manifest.length;
  }
}

type OutputEvent = { kind: "output"; output: OutputRow } | { kind: "end"; status: string };

function taskOutput(r: OutputRow): TaskOutput {
  return {
    index: r.index,
    args: r.args,
    exitCode: r.exitCode,
    stdout: fromBase64(r.stdoutBase64),
    stderr: fromBase64(r.stderrBase64),
    outputHash: r.outputHash,
    elapsedMs: r.elapsedMs,
    machine: r.machineName,
  };
}

interface Handlers<T> {
  onData(value: T): void;
  onError(error: unknown): void;
  onComplete(): void;
}

/** A subscription as an async iterator: values queue until read; an error ends it as a MarketError. */
async function* follow<T>(start: (handlers: Handlers<T>) => { unsubscribe(): void }, signal?: AbortSignalLike): AsyncGenerator<T> {
  const queue: T[] = [];
  let ended = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const end = (error: unknown) => {
    failure ??= error;
    ended = true;
    poke();
  };
  const onAbort = () => end(signal!.reason ?? new Error("aborted"));
  if (signal?.aborted) throw signal.reason;
  signal?.addEventListener("abort", onAbort, { once: true });
  const subscription = start({ onData: (v) => (queue.push(v), poke()), onError: end, onComplete: () => end(null) });
  try {
    for (;;) {
      if (queue.length) yield queue.shift()!;
      else if (ended) {
        if (failure !== null) throw signal?.aborted ? failure : marketError(failure);
        return;
      } else await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    subscription.unsubscribe();
    signal?.removeEventListener("abort", onAbort);
  }
}

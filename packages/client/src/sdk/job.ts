import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fromBase64 } from "../job-file/index.ts";
import type { CycleMarket } from "./market.ts";
import { call } from "./market.ts";
import type { MarketClient } from "./trpc.ts";

export type JobView = Awaited<ReturnType<MarketClient["jobs"]["get"]["query"]>>;
export type Decision = Awaited<ReturnType<MarketClient["jobs"]["submit"]["mutate"]>>["decision"];

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

  /** The job's progress, each time it changes, until the job ends (the last one is final). */
  async *progress(options: { intervalMs?: number; signal?: AbortSignal } = {}): AsyncGenerator<Progress> {
    let last = "";
    for (;;) {
      const job = await this.get();
      const key = `${job.status}:${job.tasksDone}:${JSON.stringify(job.tasks)}`;
      if (key !== last) {
        last = key;
        yield { status: job.status, tasksDone: job.tasksDone, taskCount: job.taskCount, tasks: job.tasks, job };
      }
      if (isFinal(job.status)) return;
      await sleep(options.intervalMs ?? 1000, options.signal);
    }
  }

  /** Resolves when the job has ended, with its final view. */
  async wait(options: { intervalMs?: number; signal?: AbortSignal; onProgress?: (p: Progress) => void } = {}): Promise<JobView> {
    let final: JobView | null = null;
    for await (const p of this.progress(options)) {
      options.onProgress?.(p);
      final = p.job;
    }
    return final!;
  }

  cancel() {
    return call(() => this.market.api.jobs.cancel.mutate({ jobId: this.id }));
  }

  /** Accepted outputs from task `fromIndex` on, one page (at most `limit` tasks, or 8 MiB). */
  async outputs(fromIndex = 0, limit = PAGE): Promise<TaskOutput[]> {
    const rows = await call(() => this.market.api.jobs.outputs.query({ jobId: this.id, fromIndex, limit }));
    return rows.map((r) => ({
      index: r.index,
      args: r.args,
      exitCode: r.exitCode,
      stdout: fromBase64(r.stdoutBase64),
      stderr: fromBase64(r.stderrBase64),
      outputHash: r.outputHash,
      elapsedMs: r.elapsedMs,
      machine: r.machineName,
    }));
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

  /** Each task's output as it is accepted, until the job ends. */
  async *results(options: { intervalMs?: number; signal?: AbortSignal } = {}): AsyncGenerator<TaskOutput> {
    const seen = new Set<number>();
    for (;;) {
      const job = await this.get();
      for await (const out of this.allOutputs()) {
        if (seen.has(out.index)) continue;
        seen.add(out.index);
        yield out;
      }
      if (isFinal(job.status)) return;
      await sleep(options.intervalMs ?? 1000, options.signal);
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

function sleep(ms: number, signal?: AbortSignal) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}

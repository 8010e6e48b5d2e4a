// A pool of sandbox threads with a wall-time limit per task, independent of the kind of
// thread: src/node/pool.ts gives it worker_threads, src/browser.ts gives it Web Workers.
// A thread that runs past its task's limit is terminated (the only way to stop a module in
// an endless loop); the slot takes the pool's spare thread, already loaded, so its next task
// does not wait for a thread to start, and a new spare starts loading in the background. The
// other slots are not involved.
//
// Under a CPU limit (setCpuLimit) tasks run paced where the host allows it (controls/pacer.ts):
// the module is compiled with pacing calls and the slot's thread rests inside the task; the time
// it rests does not count against the task's wall-time limit.
import type { BenchmarkResult } from "./benchmark.ts";
import type { ExecuteRequest, Executor } from "./executor.ts";
import { MESSAGE_VERSION, ThreadToHost, type HostToThread } from "./messages.ts";
import { compileTaskModule, failedOutcome, type SandboxErrorCode, type TaskOutcome } from "./sandbox.ts";
import { MemoryLimitError } from "./wasm-binary.ts";
import { SlotPacer, pacingSupported } from "./controls/pacer.ts";

export interface SandboxThread {
  post(message: HostToThread): void;
  terminate(): void;
}

export interface ThreadEvents {
  message(raw: unknown): void;
  /** The thread died or failed to load. */
  error(error: Error): void;
}

/** Starts one thread and wires its events. */
export type SpawnThread = (events: ThreadEvents) => SandboxThread;

interface Pending {
  kind: "run" | "benchmark";
  send(runId: string, slot: Slot): HostToThread | Promise<HostToThread>;
  wallMs: number;
  resolve(value: TaskOutcome | BenchmarkResult): void;
  reject(error: Error): void;
  fail(code: SandboxErrorCode, message: string, elapsedMs: number): void;
  signal?: AbortSignal;
  /** Told when the job gets its slot. */
  onStart?: () => void;
}

/** A thread and whom its messages are for: a slot, or nobody while it is the pool's spare. */
interface Handle {
  thread: SandboxThread;
  ready: boolean;
  owner: Slot | null;
}

interface Slot {
  thread: SandboxThread | null;
  /** The thread said it has loaded; until then its start-up time does not count against a task. */
  ready: boolean;
  /** The cells this slot's paced tasks share with its thread (null where pacing is not possible). */
  pacer: SlotPacer | null;
  current: {
    runId: string;
    job: Pending;
    started: number;
    posted: boolean;
    timer: ReturnType<typeof setTimeout> | null;
    cleanup: () => void;
  } | null;
}

/** Compiled modules kept per hash and memory limit. */
const MODULE_CACHE_SIZE = 16;
/** How long a new thread may take to load its script before its task is given up. */
const THREAD_LOAD_MS = 30_000;
/**
 * How long after a slot took the spare the next spare starts loading: loading takes a core for
 * tens of milliseconds, which would otherwise fall on the slot's next task.
 */
const NEXT_SPARE_DELAY_MS = 100;

export class ThreadPool implements Executor {
  private readonly pool: Slot[];
  private readonly queue: Pending[] = [];
  private readonly modules = new Map<string, Promise<{ module: WebAssembly.Module; paced: boolean }>>();
  private cpuLimit = 100;
  private nextRunId = 0;
  private closed = false;
  /** A loaded thread no slot uses yet, taken by a slot whose thread was stopped or died. */
  private spare: Handle | null = null;

  constructor(
    readonly slots: number,
    private readonly spawn: SpawnThread,
    private readonly options: { spareThread?: boolean; /** Pace tasks inside their run under a CPU limit; default: where the host can. */ pacing?: boolean } = {},
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`a pool needs at least one slot, got ${slots}`);
    const pacing = (options.pacing ?? true) && pacingSupported();
    this.pool = Array.from({ length: slots }, () => ({ thread: null, ready: false, pacer: pacing ? new SlotPacer() : null, current: null }));
  }

  /**
   * The producer's CPU limit, in percent of each core. Tasks started from now on run paced when
   * it is below 100 (and the host can pace); running paced tasks follow a change at once.
   */
  setCpuLimit(percent: number): void {
    this.cpuLimit = percent;
    for (const slot of this.pool) slot.pacer?.setLimit(percent);
  }

  run(request: ExecuteRequest, signal?: AbortSignal, onStart?: () => void): Promise<TaskOutcome> {
    return new Promise<TaskOutcome>((resolve, reject) => {
      const job: Pending = {
        kind: "run",
        wallMs: request.limits.wallMs,
        signal,
        onStart,
        resolve: (v) => resolve(v as TaskOutcome),
        reject,
        fail: (code, message, elapsedMs) => resolve(failedOutcome(code, message, elapsedMs)),
        send: async (runId, slot) => {
          const { module, paced } = await this.compiled(request.moduleHash, request.module, request.limits.memoryPages, this.cpuLimit < 100 && slot.pacer !== null);
          if (paced) slot.pacer!.reset();
          return {
            version: MESSAGE_VERSION,
            type: "run",
            runId,
            module,
            args: request.args,
            stdin: request.stdin ?? new Uint8Array(0),
            files: request.files,
            env: request.env,
            seed: request.seed,
            limits: { memoryPages: request.limits.memoryPages, outputBytes: request.limits.outputBytes },
            ...(paced ? { pacing: slot.pacer!.cells } : {}),
          };
        },
      };
      this.enqueue(job);
    });
  }

  benchmark(durationMs = 500): Promise<BenchmarkResult> {
    return new Promise<BenchmarkResult>((resolve, reject) => {
      this.enqueue({
        kind: "benchmark",
        wallMs: durationMs * 20 + 10_000,
        resolve: (v) => resolve(v as BenchmarkResult),
        reject,
        fail: (code, message) => reject(new Error(`benchmark ${code}: ${message}`)),
        send: (runId) => ({ version: MESSAGE_VERSION, type: "benchmark", runId, durationMs }),
      });
    });
  }

  /**
   * Starts every slot's thread now, so the first tasks do not wait for threads to load, and the
   * spare thread (unless the pool was made without one).
   */
  warm(): this {
    for (const slot of this.pool) if (!slot.thread && !this.closed) this.giveThread(slot);
    this.startSpare();
    return this;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.fail("aborted", "the pool was closed", 0);
    for (const slot of this.pool) {
      if (slot.current) this.finish(slot, (job, elapsed) => job.fail("aborted", "the pool was closed", elapsed));
      slot.thread?.terminate();
      slot.thread = null;
    }
    this.spare?.thread.terminate();
    this.spare = null;
  }

  /** The compiled module, paced when asked and possible (a module the pacer declines runs unpaced). */
  private compiled(hash: string, bytes: Uint8Array, memoryPages: number, paced: boolean): Promise<{ module: WebAssembly.Module; paced: boolean }> {
    const key = `${hash}:${memoryPages}${paced ? ":paced" : ""}`;
    let module = this.modules.get(key);
    if (!module) {
      module = paced
        ? compileTaskModule(bytes, memoryPages, true).then(
            (m) => ({ module: m, paced: true }),
            // A module the pacer declines (or cannot read) still runs, unpaced; a memory limit it
            // cannot meet is the task's failure either way.
            (e: unknown) => {
              if (e instanceof MemoryLimitError) throw e;
              return compileTaskModule(bytes, memoryPages).then((m) => ({ module: m, paced: false }));
            },
          )
        : compileTaskModule(bytes, memoryPages).then((m) => ({ module: m, paced: false }));
      module.catch(() => this.modules.delete(key));
      this.modules.set(key, module);
      if (this.modules.size > MODULE_CACHE_SIZE) this.modules.delete(this.modules.keys().next().value!);
    }
    return module;
  }

  private enqueue(job: Pending): void {
    if (this.closed) {
      job.fail("aborted", "the pool was closed", 0);
      return;
    }
    if (job.signal?.aborted) {
      job.fail("aborted", "the task was given up before it started", 0);
      return;
    }
    job.signal?.addEventListener(
      "abort",
      () => {
        const i = this.queue.indexOf(job);
        if (i >= 0) {
          this.queue.splice(i, 1);
          job.fail("aborted", "the task was given up before it started", 0);
        }
      },
      { once: true },
    );
    this.queue.push(job);
    this.dispatch();
  }

  private dispatch(): void {
    for (const slot of this.pool) {
      if (this.queue.length === 0) return;
      if (slot.current) continue;
      this.start(slot, this.queue.shift()!);
    }
  }

  private start(slot: Slot, job: Pending): void {
    const runId = `r${this.nextRunId++}`;
    const started = performance.now();
    const onAbort = () => this.stop(slot, runId, "aborted", "the task was given up while running");
    job.signal?.addEventListener("abort", onAbort, { once: true });
    slot.current = { runId, job, started, posted: false, timer: null, cleanup: () => job.signal?.removeEventListener("abort", onAbort) };
    job.onStart?.();

    if (!slot.thread) this.giveThread(slot);
    const thread = slot.thread!;
    Promise.resolve(job.send(runId, slot)).then(
      (message) => {
        if (slot.current?.runId !== runId) return; // aborted while compiling
        thread.post(message);
        slot.current.posted = true;
        this.armTimer(slot);
      },
      (e: unknown) => {
        if (slot.current?.runId !== runId) return;
        const code = e instanceof MemoryLimitError ? "memory-limit" : "invalid-module";
        const text = e instanceof Error ? e.message : String(e);
        this.finish(slot, (j, elapsed) => j.fail(code, code === "invalid-module" ? `the module does not compile: ${text}` : text, elapsed));
      },
    );
  }

  /** Gives the slot the spare thread if there is one (the next spare loads soon after), else a new one. */
  private giveThread(slot: Slot): void {
    const handle = this.spare ?? this.spawnThread();
    if (handle === this.spare) this.spare = null;
    handle.owner = slot;
    slot.thread = handle.thread;
    slot.ready = handle.ready;
    if (this.options.spareThread !== false) setTimeout(() => this.startSpare(), NEXT_SPARE_DELAY_MS);
  }

  private startSpare(): void {
    if (this.options.spareThread !== false && !this.spare && !this.closed) this.spare = this.spawnThread();
  }

  private spawnThread(): Handle {
    const handle: Handle = { thread: null!, ready: false, owner: null };
    handle.thread = this.spawn({
      message: (raw) => {
        const slot = handle.owner;
        if (!slot) {
          if (ThreadToHost.safeParse(raw).data?.type === "ready") handle.ready = true;
          return;
        }
        if (slot.thread !== handle.thread) return; // a terminated thread's last words
        this.onMessage(slot, raw);
      },
      error: (error) => {
        const slot = handle.owner;
        if (!slot) {
          // A spare that died is dropped; the next one starts only when a slot takes a thread, so
          // threads that cannot load are not restarted in a loop.
          if (this.spare === handle) this.spare = null;
          return;
        }
        if (slot.thread !== handle.thread) return;
        this.replaceThread(slot);
        if (slot.current) this.finish(slot, (job, elapsed) => job.fail("crashed", `the sandbox thread died: ${error.message}`, elapsed));
      },
    });
    return handle;
  }

  /** The wall clock starts once the thread has loaded and has the task, not while compiling. */
  // A thread that never loads still ends the task, after THREAD_LOAD_MS more.
  private armTimer(slot: Slot): void {
    const current = slot.current;
    if (!current || !current.posted) return;
    if (current.timer) clearTimeout(current.timer);
    const { runId, job } = current;
    // The deadline is checked against the clock when the timer fires (a timer may fire a fraction
    // of a millisecond early), and time the task rested for the CPU limit extends it.
    const armedAt = performance.now();
    const expire = () => {
      const rested = job.kind === "run" && slot.pacer ? slot.pacer.rested() : 0;
      const left = armedAt + job.wallMs + rested - performance.now();
      if (slot.current?.runId === runId && left > 0) {
        current.timer = setTimeout(expire, Math.ceil(left));
        return;
      }
      this.stop(slot, runId, "timeout", `the task ran past its wall-time limit of ${job.wallMs} ms`);
    };
    current.timer = slot.ready
      ? setTimeout(expire, job.wallMs)
      : setTimeout(() => this.stop(slot, runId, "crashed", `the sandbox thread did not start within ${THREAD_LOAD_MS} ms`), job.wallMs + THREAD_LOAD_MS);
  }

  private onMessage(slot: Slot, raw: unknown): void {
    const parsed = ThreadToHost.safeParse(raw);
    if (!parsed.success) {
      this.stop(slot, slot.current?.runId ?? "", "crashed", "the sandbox thread sent a message this page does not understand");
      return;
    }
    const msg = parsed.data;
    if (msg.type === "ready") {
      slot.ready = true;
      this.armTimer(slot);
      return;
    }
    if (!slot.current || msg.runId !== slot.current.runId) return;
    if (msg.type === "result") this.finish(slot, (job) => job.resolve(msg.outcome));
    else if (msg.type === "benchmark-result") this.finish(slot, (job) => job.resolve(msg.result));
    else this.finish(slot, (job, elapsed) => job.fail("crashed", msg.message, elapsed));
  }

  /** Ends the slot's current task by terminating its thread. */
  private stop(slot: Slot, runId: string, code: SandboxErrorCode, message: string): void {
    if (!slot.current || slot.current.runId !== runId) return;
    this.replaceThread(slot);
    this.finish(slot, (job, elapsed) => job.fail(code, message, elapsed));
  }

  /** Terminates the slot's thread and gives it its successor (none once the pool is closed). */
  private replaceThread(slot: Slot): void {
    const old = slot.thread;
    slot.thread = null;
    slot.ready = false;
    old?.terminate();
    if (!this.closed) this.giveThread(slot);
  }

  private finish(slot: Slot, settle: (job: Pending, elapsedMs: number) => void): void {
    const current = slot.current;
    if (!current) return;
    slot.current = null;
    if (current.timer) clearTimeout(current.timer);
    current.cleanup();
    settle(current.job, performance.now() - current.started);
    // After those awaiting this task have heard it ended, so its end is told before the next start.
    if (!this.closed) queueMicrotask(() => this.dispatch());
  }
}

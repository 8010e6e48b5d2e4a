// Every limit a job meets, in one place: the API refuses past them with the limit and the value
// (reasons in refusal.ts), and the README's table is written from these numbers.

const MiB = 1024 * 1024;

export const JOB_LIMITS = {
  /** Tasks in one job. */
  tasksPerJob: 10_000,
  /** One task's stdin, in bytes. */
  stdinBytesPerTask: MiB,
  /** One task's input files together, in bytes. */
  fileBytesPerTask: 4 * MiB,
  /** Input files of one task. */
  filesPerTask: 64,
  /** Environment variables of one task; each value is at most `envValueChars` characters. */
  envPerTask: 64,
  envValueChars: 4096,
  /** Arguments of one task; each is at most `argChars` characters. */
  argsPerTask: 256,
  argChars: 4096,
  /** Stdin and files of every task of one job together, in bytes: what one submission carries. */
  inputBytesPerJob: 32 * MiB,
  /** What one task may write to stdout, and to stderr, in bytes (enforced by the sandbox and the market). */
  outputBytesPerTask: MiB,
  /** Per-task limits a job may ask for. */
  maxMemoryMb: 4096,
  minWallSeconds: 0.001,
  maxWallSeconds: 3600,
  /** A task's work estimate, in seconds of a reference CPU: a millisecond to a day. */
  minWorkPerTask: 0.001,
  maxWorkPerTask: 86_400,
  /** The market's default module size limit, in bytes (MAX_MODULE_BYTES may change it). */
  defaultModuleBytes: 8 * MiB,
} as const;

/** Per-task limits when the job file says nothing. */
export const DEFAULT_TASK_LIMITS = { memoryMb: 64, wallSeconds: 120 } as const;

import { parse, quote } from "shell-quote";
import type { JobFile, JobFileInput } from "@cyclemarket/client/job-file";

// The job file the simple form's "your own module" mode amounts to: what it submits, shown as the
// JSON the CLI would read for the same job. Task lines are split as a shell splits a command
// line ("a b" and 'a b' are one argument, \ escapes), and `< FILE` gives that task its stdin from
// a file added to the page.

/** One task line: its arguments, and the file its stdin comes from if it said `< FILE`. */
export interface TaskLine {
  args: string[];
  stdinFile?: string;
}

export type FormTasks = { kind: "list"; lines: TaskLine[] } | { kind: "count"; count: number; args: string[] };

export interface UploadForm {
  name: string;
  /** Show the job's name to the producers who run it (they always see its short id). */
  nameToProducers?: boolean;
  /** The chosen module's file name: job files name the module by path. */
  moduleName: string;
  tasks: FormTasks;
  /** One stdin for every task (`{i}` is the task's index in generated tasks); "" for none. */
  stdin: string;
  benefit: JobFileInput["benefit"];
  replicas: number;
  /** Undefined: the job gives none, and the market runs pilots first. */
  workPerTask: number | undefined;
  /** The most the job may cost should its measured work exceed the estimate; undefined: the quote. */
  maxSpend?: number | undefined;
  memoryMb: number;
  wallSeconds: number;
}

/** A task line as a shell would split it; a shell operator other than `< FILE` is refused with words. */
export function parseTaskLine(line: string): TaskLine {
  // `$NAME` stays as written: a task's environment is not the page's.
  const entries = parse(line, (name) => `$${name}`);
  const task: TaskLine = { args: [] };
  for (let k = 0; k < entries.length; k++) {
    const e = entries[k]!;
    if (typeof e === "string") task.args.push(e);
    else if ("comment" in e) break;
    else if (e.op === "glob") task.args.push(e.pattern);
    else if (e.op === "<" && typeof entries[k + 1] === "string" && !task.stdinFile) task.stdinFile = entries[++k] as string;
    else throw new Error(`"${e.op}" is not an argument: quote it ('${e.op}') to pass it to the program${e.op === "<" ? ", or write < FILE once" : ""}.`);
  }
  return task;
}

/** One task per non-empty line, or the first line's problem with its number. */
export function parseTaskLines(text: string): { lines: TaskLine[]; error: string | null } {
  const lines: TaskLine[] = [];
  for (const [n, raw] of text.split("\n").entries()) {
    if (raw.trim() === "") continue;
    try {
      lines.push(parseTaskLine(raw));
    } catch (e) {
      return { lines, error: `Line ${n + 1}: ${(e as Error).message}` };
    }
  }
  return { lines, error: null };
}

export function formJobFile(f: UploadForm): JobFileInput {
  const stdin = f.stdin ? { stdin: f.stdin } : {};
  return {
    name: f.name,
    ...(f.nameToProducers ? { nameToProducers: true } : {}),
    module: f.moduleName,
    benefit: f.benefit,
    replicas: f.replicas,
    ...(f.workPerTask === undefined ? {} : { workPerTask: f.workPerTask }),
    ...(f.maxSpend === undefined ? {} : { maxSpend: f.maxSpend }),
    limits: { memoryMb: f.memoryMb, wallSeconds: f.wallSeconds },
    tasks:
      f.tasks.kind === "count"
        ? { count: f.tasks.count, args: f.tasks.args, ...stdin }
        : f.tasks.lines.map((t) => ({ args: t.args, ...(t.stdinFile ? { stdin: { file: t.stdinFile } } : stdin) })),
  };
}

/** What a dropped job file puts into the form's fields (the benefit curve stays the form's). */
export interface FormFill {
  name: string;
  moduleName: string | null;
  tasksKind: "list" | "count";
  taskLines: string;
  count: string;
  argsTemplate: string;
  stdin: string;
  replicas: string;
  workPerTask: string;
  maxSpend: string;
  memoryMb: string;
  wallSeconds: string;
}

/** The form's fields for a job file; null when the form cannot say it (per-line tasks, env, input files, base64). */
export function fillFromJobFile(job: JobFile): FormFill | null {
  const t = job.tasks;
  const listed = Array.isArray(t) ? t : [];
  if ((!Array.isArray(t) && "lines" in t) || [...listed, ...(Array.isArray(t) ? [] : [t])].some((x) => x.env || x.files || (x.stdin && typeof x.stdin !== "string" && !("file" in x.stdin)))) return null;
  const inline = listed.map((x) => (typeof x.stdin === "string" ? x.stdin : null));
  const shared = Array.isArray(t) ? (inline.every((s) => s === inline[0]) ? (inline[0] ?? "") : null) : typeof t.stdin === "string" ? t.stdin : "";
  if (shared === null && listed.some((x) => typeof x.stdin === "string")) return null;
  const line = (x: (typeof listed)[number]) => quote(x.args) + (x.stdin && typeof x.stdin !== "string" && "file" in x.stdin ? ` < ${quote([x.stdin.file])}` : "");
  return {
    name: job.name,
    moduleName: typeof job.module === "string" ? job.module.split("/").pop()! : null,
    tasksKind: Array.isArray(t) ? "list" : "count",
    taskLines: listed.map(line).join("\n"),
    count: Array.isArray(t) ? "10" : String((t as { count: number }).count),
    argsTemplate: Array.isArray(t) ? "" : quote(t.args),
    stdin: shared ?? "",
    replicas: String(job.replicas),
    workPerTask: job.workPerTask === undefined ? "" : String(job.workPerTask),
    maxSpend: job.maxSpend === undefined ? "" : String(job.maxSpend),
    memoryMb: String(job.limits.memoryMb),
    wallSeconds: String(job.limits.wallSeconds),
  };
}

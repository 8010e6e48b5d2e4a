// A job file becomes the JobRequest the API takes: generated tasks are written out, `{i}` and
// `{line}` are filled in, and files named in the job file are read through `read`, so the same
// code serves the CLI (reading the disk) and the web form (reading the files the user dropped).
import { toBase64, utf8 } from "./base64.ts";
import type { InputFiles, JobFile, ListedTask, Stdin } from "./job-file.ts";
import type { JobRequest, TaskRequest } from "./job-request.ts";
import { JOB_LIMITS as L } from "./limits.ts";
import type { JobFileReason } from "./reason.ts";
import { sandboxPathProblem } from "./sandbox-path.ts";

/** Reads a file named in the job file (a path relative to it); throws JobFileProblem when it cannot. */
export type ReadFile = (path: string) => Uint8Array;

export type { JobFileReason } from "./reason.ts";

/** A job file that cannot become a request, with its reason as data. */
export class JobFileProblem extends Error {
  constructor(readonly reason: JobFileReason, message: string) {
    super(message);
  }
}

const fill = (text: string, vars: Record<string, string>) => text.replace(/\{(i|line)\}/g, (whole, name: string) => vars[name] ?? whole);

function fillTask(t: ListedTask, vars: Record<string, string>): ListedTask {
  const stdin: Stdin | undefined = t.stdin === undefined ? undefined : typeof t.stdin === "string" ? fill(t.stdin, vars) : "file" in t.stdin ? { file: fill(t.stdin.file, vars) } : t.stdin;
  const files: InputFiles | undefined = t.files && Object.fromEntries(Object.entries(t.files).map(([name, v]) => [name, typeof v === "string" ? fill(v, vars) : v]));
  const env = t.env && Object.fromEntries(Object.entries(t.env).map(([k, v]) => [k, fill(v, vars)]));
  return { args: t.args.map((a) => fill(a, vars)), stdin, env, files };
}

/** The job file's tasks, written out one per task. */
export function listTasks(job: Pick<JobFile, "tasks">, read: ReadFile): ListedTask[] {
  const tasks = job.tasks;
  if (Array.isArray(tasks)) return tasks;
  const { args, stdin, env, files } = tasks;
  const template: ListedTask = { args, stdin, env, files };
  if ("count" in tasks) return Array.from({ length: tasks.count }, (_, i) => fillTask(template, { i: String(i) }));
  const lines = new TextDecoder().decode(read(tasks.lines)).split(/\r?\n/).filter((l) => l.trim() !== "");
  if (!lines.length) throw new JobFileProblem({ code: "no-lines", path: tasks.lines }, `${tasks.lines} has no lines, so the job has no tasks.`);
  if (lines.length > L.tasksPerJob) {
    throw new JobFileProblem({ code: "too-many-lines", path: tasks.lines, lines: lines.length, max: L.tasksPerJob }, `${tasks.lines} has ${lines.length} lines; a job has at most ${L.tasksPerJob} tasks.`);
  }
  return lines.map((line, i) => fillTask(template, { i: String(i), line }));
}

/** One task as the API takes it. Files are read once each, however many tasks name them. */
export function taskRequest(task: ListedTask, index: number, read: ReadFile): TaskRequest {
  const s = task.stdin;
  const stdin = s === undefined ? "" : typeof s === "string" ? toBase64(utf8(s)) : "file" in s ? toBase64(read(s.file)) : s.base64;
  const files: Record<string, string> = {};
  for (const [name, v] of Object.entries(task.files ?? {})) {
    const problem = sandboxPathProblem(name);
    if (problem) throw new JobFileProblem({ code: "input-file-name-refused", task: index, name, problem }, `Task ${index}: the input file name ${JSON.stringify(name)} is refused (${problem}).`);
    files[name] = typeof v === "string" ? toBase64(read(v)) : "text" in v ? toBase64(utf8(v.text)) : v.base64;
  }
  return { args: task.args, stdin, env: task.env ?? {}, files };
}

/** Caches reads, so a thousand tasks naming one file read it once. */
export function cachedReader(read: ReadFile): ReadFile {
  const seen = new Map<string, Uint8Array>();
  return (path) => {
    let bytes = seen.get(path);
    if (!bytes) seen.set(path, (bytes = read(path)));
    return bytes;
  };
}

/** The module's file to upload, or null when the job file names the module by its hash. */
export const modulePath = (job: Pick<JobFile, "module">): string | null => (typeof job.module === "string" ? job.module : null);

/** The request for a job file whose module has the hash `moduleHash`. */
export function jobRequest(job: JobFile, moduleHash: string, read: ReadFile): JobRequest {
  const cached = cachedReader(read);
  return {
    name: job.name,
    nameToProducers: job.nameToProducers,
    benefit: job.benefit,
    replicas: job.replicas,
    ...(job.maxSpend === undefined ? {} : { maxSpend: job.maxSpend }),
    source: {
      kind: "module",
      moduleHash,
      ...(job.workPerTask === undefined ? {} : { workPerTask: job.workPerTask }),
      limits: job.limits,
      tasks: listTasks(job, cached).map((t, i) => taskRequest(t, i, cached)),
    },
  };
}

"use client";
import { useRouter } from "next/navigation";
import { useEffect, useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC, useTRPCClient, type RouterInputs, type RouterOutputs } from "@/lib/trpc";
import { JobFile } from "@cyclemarket/client/job-file";
import { fillFromJobFile, formJobFile, parseTaskLine, parseTaskLines, type TaskLine, type UploadForm } from "@/lib/form-job-file";
import { NotSent, pageReader, requestForJobFile } from "@/lib/job-file-request";
import { describeError, isReason } from "@/lib/reasons";
import { bytes, credits, seconds } from "@/lib/format";
import { maxBenefit } from "@cyclemarket/costbenefit";
import { useBalance, useMoneyMoved } from "@/components/balance";
import { BenefitEditor, DEFAULT_BENEFIT, buildCurve, type BenefitDraft } from "@/components/benefit-editor";
import { quoteChoice, type DecisionRecord } from "@/components/decision";
import { AnswerView } from "./answer-view";
import { Alert, Button, Card, Field, Loading, cx, inputClass } from "@/components/ui";

type SubmitJob = RouterInputs["jobs"]["submit"];
type Example = RouterOutputs["jobs"]["examples"][number];
type Mode = "example" | "upload";

const MAX_TASKS = 10_000;
const DEFAULT_TASKS: Record<string, number> = { montecarlo: 20, primes: 20 };

interface UploadDraft {
  fileName: string | null;
  fileSize: number;
  reading: boolean;
  /** The module and any files tasks read their stdin from, by name. */
  files: Map<string, Uint8Array>;
  tasksKind: "list" | "count";
  taskLines: string;
  count: string;
  argsTemplate: string;
  stdin: string;
  workPerTask: string;
  memoryMbPerTask: string;
  wallSeconds: string;
}

export function NewJobForm() {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const examples = useQuery(trpc.jobs.examples.queryOptions(undefined, { staleTime: Infinity }));

  const [mode, setMode] = useState<Mode>("example");
  const [exampleName, setExampleName] = useState("montecarlo");
  const [name, setName] = useState("");
  const [nameToProducers, setNameToProducers] = useState(false);
  const [taskCount, setTaskCount] = useState("20");
  const [params, setParams] = useState<Record<string, string>>({});
  const [benefit, setBenefit] = useState<BenefitDraft>(DEFAULT_BENEFIT);
  const [replicas, setReplicas] = useState("1");
  // Empty: the job is never charged more than its quote.
  const [maxSpend, setMaxSpend] = useState("");
  const [upload, setUpload] = useState<UploadDraft>({
    fileName: null,
    fileSize: 0,
    reading: false,
    files: new Map(),
    tasksKind: "list",
    taskLines: "",
    count: "10",
    argsTemplate: "{i}",
    stdin: "",
    workPerTask: "1",
    memoryMbPerTask: "64",
    wallSeconds: "120",
  });
  const client = useTRPCClient();
  const [sendProblem, setSendProblem] = useState<string | null>(null);
  const [showErrors, setShowErrors] = useState(false);
  const [answer, setAnswer] = useState<{ kind: "quote" | "decision"; decision: DecisionRecord; jobId?: string } | null>(null);

  const quote = useMutation(trpc.jobs.quote.mutationOptions());
  const submit = useMutation(trpc.jobs.submit.mutationOptions());
  const busyError = quote.error ?? submit.error;

  const example: Example | undefined = examples.data?.find((e) => e.name === exampleName);

  // A new example brings its own defaults.
  useEffect(() => {
    if (!example) return;
    setParams(Object.fromEntries(Object.entries(example.defaultParams).map(([k, v]) => [k, String(v)])));
    setTaskCount(String(DEFAULT_TASKS[example.name] ?? 20));
  }, [example]);

  const tasksFixedByParams = exampleName === "mandelbrot";
  const uploadTasks = parseTaskLines(upload.taskLines);
  let template: TaskLine | null = null;
  let templateError: string | null = null;
  try {
    template = parseTaskLine(upload.argsTemplate);
    if (template.stdinFile) templateError = "Generated tasks take one stdin for all, below; `< FILE` is for listed tasks.";
  } catch (e) {
    templateError = (e as Error).message;
  }
  const uploadCount = upload.tasksKind === "count" ? Number(upload.count) : uploadTasks.lines.length;

  /** The job to send, or the problems that keep it from being sent. */
  function build(): { job: SubmitJob | null; jobFile: JobFile | null; errors: Record<string, string> } {
    const errors: Record<string, string> = {};
    const { curve, errors: curveErrors } = buildCurve(benefit);
    if (!curve) errors.benefit = Object.values(curveErrors)[0] ?? "The benefit curve is not valid.";
    const reps = Number(replicas);
    if (!Number.isInteger(reps) || reps < 1 || reps > 5) errors.replicas = "Between 1 and 5 replicas.";
    const limit = maxSpend.trim() === "" ? undefined : Number(maxSpend);
    if (limit !== undefined && !(limit > 0 && limit <= 1e12)) errors.maxSpend = "A number of credits above 0, or empty for the quoted price.";
    const jobName = name.trim() || (mode === "example" ? (example?.title ?? exampleName) : (upload.fileName ?? "My job"));

    let source: SubmitJob["source"] | null = null;
    let jobFile: JobFile | null = null;
    if (mode === "example") {
      const n = Number(taskCount);
      if (!tasksFixedByParams && (!Number.isInteger(n) || n < 1 || n > MAX_TASKS)) errors.taskCount = `A whole number from 1 to ${MAX_TASKS}.`;
      const parsedParams: Record<string, number> = {};
      for (const [k, v] of Object.entries(params)) {
        const x = Number(v);
        if (v.trim() === "" || !Number.isFinite(x)) errors[`param.${k}`] = "Enter a number.";
        else parsedParams[k] = x;
      }
      source = { kind: "example", example: exampleName as "montecarlo", params: parsedParams, taskCount: tasksFixedByParams ? 1 : n };
    } else {
      if (!upload.fileName || upload.reading) errors.module = "Choose a .wasm file.";
      if (upload.tasksKind === "list") {
        if (uploadTasks.error) errors.tasks = uploadTasks.error;
        else if (uploadTasks.lines.length === 0) errors.tasks = "Give at least one task: one line of arguments per task.";
      } else if (templateError) errors.tasks = templateError;
      if (!Number.isInteger(uploadCount) || uploadCount < 1 || uploadCount > MAX_TASKS) errors.taskCount = `From 1 to ${MAX_TASKS} tasks.`;
      // Empty: the market runs the first tasks as pilots and plans the rest from their measured time.
      const work = Number(upload.workPerTask);
      if (upload.workPerTask.trim() !== "" && (!(work > 0) || work > 86_400)) errors.workPerTask = "A positive number of reference seconds, at most a day.";
      const mem = Number(upload.memoryMbPerTask);
      if (!Number.isInteger(mem) || mem < 1 || mem > 4096) errors.memory = "Whole megabytes from 1 to 4096.";
      const wall = Number(upload.wallSeconds);
      if (!(wall > 0) || wall > 3600) errors.wallSeconds = "Seconds from 1 to 3600.";
      if (curve) {
        const parsed = JobFile.safeParse(formJobFile(uploadForm(jobName, curve)));
        if (parsed.success) jobFile = parsed.data;
        else errors.jobFile ??= parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
      }
    }
    if (Object.keys(errors).length > 0 || !curve || (!source && !jobFile)) return { job: null, jobFile: null, errors };
    return { job: source ? { name: jobName, nameToProducers, source, benefit: curve, replicas: reps, ...(limit === undefined ? {} : { maxSpend: limit }) } : null, jobFile, errors };
  }

  /** The form's own-module fields as the job file's pieces. */
  function uploadForm(jobName: string, curve: NonNullable<ReturnType<typeof buildCurve>["curve"]>): UploadForm {
    return {
      name: jobName,
      nameToProducers,
      moduleName: upload.fileName ?? "program.wasm",
      tasks: upload.tasksKind === "count" ? { kind: "count", count: Number(upload.count) || 1, args: template?.args ?? [] } : { kind: "list", lines: uploadTasks.lines },
      stdin: upload.stdin,
      benefit: curve,
      replicas: Number(replicas) || 1,
      workPerTask: upload.workPerTask.trim() === "" ? undefined : Number(upload.workPerTask) || 1,
      maxSpend: maxSpend.trim() === "" || !(Number(maxSpend) > 0) ? undefined : Number(maxSpend),
      memoryMb: Number(upload.memoryMbPerTask) || 64,
      wallSeconds: Number(upload.wallSeconds) || 120,
    };
  }

  const { errors } = build();
  const balance = useBalance();
  const moneyMoved = useMoneyMoved();
  const curve = buildCurve(benefit).curve;
  const highest = curve ? Math.max(0, maxBenefit(curve)) : null;
  const err = (key: string) => (showErrors ? (errors[key] ?? null) : null);

  /** The job to send (an own module is uploaded first, once, by hash), or null with the problem shown. */
  async function ready(): Promise<SubmitJob | null> {
    setShowErrors(true);
    setSendProblem(null);
    quote.reset();
    submit.reset();
    const { job, jobFile } = build();
    if (!jobFile) return job;
    try {
      return await requestForJobFile(client, jobFile, pageReader(upload.files));
    } catch (e) {
      setSendProblem(e instanceof NotSent ? e.message : describeError(e));
      return null;
    }
  }

  async function onQuote() {
    const job = await ready();
    if (!job) return;
    setAnswer(null);
    try {
      const decision = await quote.mutateAsync(job);
      setAnswer({ kind: "quote", decision });
    } catch {
      // shown from quote.error
    }
  }

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    // The job goes to the Market Manager whose quote is shown, or split as it shows, when one is.
    const chosen = quoteChoice(answer?.kind === "quote" ? answer.decision : undefined);
    const job = await ready();
    if (!job) return;
    setAnswer(null);
    try {
      const { jobId, decision } = await submit.mutateAsync({ ...job, ...chosen });
      setAnswer({ kind: "decision", decision, jobId });
      await Promise.all([queryClient.invalidateQueries({ queryKey: trpc.jobs.list.queryKey() }), moneyMoved()]);
      // A rejected job stays here so the consumer can change the curve and try again.
      if (decision.outcome !== "rejected") router.push(`/jobs/${jobId}`);
    } catch {
      // shown from submit.error
    }
  }

  async function onFile(file: File | null) {
    if (!file) {
      setUpload((u) => ({ ...u, fileName: null, fileSize: 0 }));
      return;
    }
    setUpload((u) => ({ ...u, fileName: file.name, fileSize: file.size, reading: true }));
    const bytes = new Uint8Array(await file.arrayBuffer());
    setUpload((u) => ({ ...u, files: new Map(u.files).set(file.name, bytes), reading: false }));
  }

  /** Files dropped on the form: a job file fills it, a .wasm is the module, others are stdin files for `< FILE`. */
  async function onDropFiles(list: FileList | null) {
    if (!list) return;
    setMode("upload");
    for (const f of Array.from(list)) {
      if (f.name.endsWith(".wasm")) await onFile(f);
      else if (f.name.endsWith(".json")) {
        const parsed = JobFile.safeParse(JSON.parse(await f.text()));
        const fill = parsed.success ? fillFromJobFile(parsed.data) : null;
        if (!fill) {
          setSendProblem(parsed.success ? "This job file says more than the form can (per-line tasks, env or input files): use the job-file tab." : `${f.name} is not a valid job file.`);
          continue;
        }
        setName(fill.name);
        setReplicas(fill.replicas);
        setMaxSpend(fill.maxSpend);
        setUpload((u) => ({ ...u, ...fill, fileName: u.fileName ?? fill.moduleName, memoryMbPerTask: fill.memoryMb }));
      } else {
        const bytes = new Uint8Array(await f.arrayBuffer());
        setUpload((u) => ({ ...u, files: new Map(u.files).set(f.name, bytes) }));
      }
    }
  }

  if (examples.isPending) return <Loading label="Loading the examples…" />;

  return (
    <form onSubmit={onSubmit} className="grid grid-cols-1 gap-6 lg:grid-cols-[minmax(0,1fr)_22rem]" aria-label="New job">
      <div className="space-y-6">
        <Card title="Program">
          <div role="radiogroup" aria-label="Kind of job" className="mb-5 inline-flex rounded-lg bg-slate-100 p-1">
            {(
              [
                ["example", "Ready-made program"],
                ["upload", "Upload your own module"],
              ] as const
            ).map(([value, label]) => (
              <label
                key={value}
                className={cx(
                  "relative cursor-pointer rounded-md px-3 py-1.5 text-sm font-medium has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-indigo-600",
                  mode === value ? "bg-white text-slate-900 shadow-sm" : "text-slate-600 hover:text-slate-900",
                )}
              >
                <input type="radio" name="mode" value={value} checked={mode === value} onChange={() => setMode(value)} className="absolute inset-0 cursor-pointer opacity-0" />
                {label}
              </label>
            ))}
          </div>

          {mode === "example" ? (
            examples.isError ? (
              <Alert tone="error" title="The examples could not be loaded">
                {describeError(examples.error)}
              </Alert>
            ) : (
              <div className="space-y-4">
                <Field label="Example" hint={example?.description}>
                  {(p) => (
                    <select {...p} value={exampleName} onChange={(e) => setExampleName(e.target.value)} className={inputClass}>
                      {(examples.data ?? []).map((e) => (
                        <option key={e.name} value={e.name}>
                          {e.title}
                        </option>
                      ))}
                    </select>
                  )}
                </Field>
                <Field
                  label="Number of tasks"
                  hint={tasksFixedByParams ? "The picture's tiles set the number of tasks: (image size ÷ tile size)²." : "Each task runs on one slot of one machine."}
                  error={err("taskCount")}
                >
                  {(p) => (
                    <input
                      {...p}
                      type="number"
                      min={1}
                      max={MAX_TASKS}
                      step={1}
                      value={tasksFixedByParams ? String(mandelbrotTiles(params)) : taskCount}
                      disabled={tasksFixedByParams}
                      onChange={(e) => setTaskCount(e.target.value)}
                      className={inputClass}
                    />
                  )}
                </Field>
                {Object.keys(params).length > 0 ? (
                  <div className="grid gap-4 sm:grid-cols-2">
                    {Object.entries(params).map(([k, v]) => (
                      <Field key={k} label={paramLabel(k)} error={err(`param.${k}`)}>
                        {(p) => <input {...p} type="number" step="any" value={v} onChange={(e) => setParams({ ...params, [k]: e.target.value })} className={inputClass} />}
                      </Field>
                    ))}
                  </div>
                ) : null}
                {example ? <p className="text-xs text-slate-500">About {seconds(example.defaultWorkPerTask)} of reference CPU per task with the default settings.</p> : null}
              </div>
            )
          ) : (
            <div className="space-y-4">
              <Field
                label="Module (.wasm)"
                hint={upload.fileName ? `${upload.fileName}, ${bytes(upload.fileSize)}${upload.reading ? " (reading…)" : ""}` : "A WASI preview 1 command module: _start, args, stdin, stdout."}
                error={err("module")}
              >
                {(p) => (
                  <input
                    {...p}
                    type="file"
                    accept=".wasm,application/wasm"
                    onChange={(e) => void onFile(e.target.files?.[0] ?? null)}
                    className="block w-full text-sm text-slate-700 file:mr-3 file:rounded-lg file:border-0 file:bg-indigo-50 file:px-3 file:py-2 file:text-sm file:font-medium file:text-indigo-700 hover:file:bg-indigo-100"
                  />
                )}
              </Field>
              <div role="radiogroup" aria-label="Tasks" className="flex gap-4 text-sm">
                {(
                  [
                    ["list", "One task per line"],
                    ["count", "Generated tasks"],
                  ] as const
                ).map(([value, label]) => (
                  <label key={value} className="flex items-center gap-1.5">
                    <input type="radio" name="tasksKind" value={value} checked={upload.tasksKind === value} onChange={() => setUpload({ ...upload, tasksKind: value })} />
                    {label}
                  </label>
                ))}
              </div>
              {upload.tasksKind === "list" ? (
                <Field
                  label="Task arguments (one task per line)"
                  hint={`${uploadTasks.lines.length} task${uploadTasks.lines.length === 1 ? "" : "s"}. Split as a shell does: "two words" or 'two words' is one argument, \\ escapes; end a line with < FILE to give that task its stdin from a file added below.`}
                  error={err("tasks") ?? (showErrors ? null : uploadTasks.error)}
                >
                  {(p) => (
                    <textarea
                      {...p}
                      rows={6}
                      value={upload.taskLines}
                      placeholder={"1000000 0\n'a phrase' 1\n7 4096 < inputs/7.txt"}
                      onChange={(e) => setUpload({ ...upload, taskLines: e.target.value })}
                      className={cx(inputClass, "font-mono")}
                    />
                  )}
                </Field>
              ) : (
                <div className="grid gap-4 sm:grid-cols-[8rem_1fr]">
                  <Field label="Number of tasks" error={err("taskCount")}>
                    {(p) => <input {...p} type="number" min={1} max={MAX_TASKS} step={1} value={upload.count} onChange={(e) => setUpload({ ...upload, count: e.target.value })} className={inputClass} />}
                  </Field>
                  <Field label="Arguments of every task" hint="{i} is the task's index, from 0." error={err("tasks") ?? templateError}>
                    {(p) => <input {...p} value={upload.argsTemplate} onChange={(e) => setUpload({ ...upload, argsTemplate: e.target.value })} className={cx(inputClass, "font-mono")} />}
                  </Field>
                </div>
              )}
              <Field label="Stdin of every task" hint={upload.tasksKind === "count" ? "Optional; {i} is the task's index." : "Optional; a task with < FILE reads that file instead."}>
                {(p) => <textarea {...p} rows={2} value={upload.stdin} onChange={(e) => setUpload({ ...upload, stdin: e.target.value })} className={cx(inputClass, "font-mono")} />}
              </Field>
              <div
                onDragOver={(e) => e.preventDefault()}
                onDrop={(e) => (e.preventDefault(), void onDropFiles(e.dataTransfer.files))}
                className="rounded-lg border-2 border-dashed border-slate-300 p-3 text-sm"
              >
                <label className="block font-medium text-slate-800">
                  Drop a job file, the module or stdin files here
                  <input type="file" multiple aria-label="Job file, module or stdin files" className="mt-2 block text-sm" onChange={(e) => void onDropFiles(e.target.files)} />
                </label>
                {upload.files.size ? (
                  <ul className="mt-2 text-xs text-slate-600" aria-label="Files on the page">
                    {[...upload.files.entries()].map(([n, data]) => (
                      <li key={n}>
                        {n} · {bytes(data.length)}
                      </li>
                    ))}
                  </ul>
                ) : null}
              </div>
              <div className="grid gap-4 sm:grid-cols-2">
                <Field label="Work per task (reference seconds)" hint="Seconds one task takes on a speed-1 slot. Leave it empty if you do not know: the first tasks then run as pilots and the rest is priced from their measured time." error={err("workPerTask")}>
                  {(p) => <input {...p} type="number" min={0} step="any" value={upload.workPerTask} onChange={(e) => setUpload({ ...upload, workPerTask: e.target.value })} className={inputClass} />}
                </Field>
                <Field label="Memory per task (MB)" error={err("memory")}>
                  {(p) => <input {...p} type="number" min={1} step={1} value={upload.memoryMbPerTask} onChange={(e) => setUpload({ ...upload, memoryMbPerTask: e.target.value })} className={inputClass} />}
                </Field>
                <Field label="Wall time per task (seconds)" error={err("wallSeconds")}>
                  {(p) => <input {...p} type="number" min={1} max={3600} step="any" value={upload.wallSeconds} onChange={(e) => setUpload({ ...upload, wallSeconds: e.target.value })} className={inputClass} />}
                </Field>
              </div>
            </div>
          )}
        </Card>

        <Card title="What finishing is worth">
          <p className="mb-4 text-sm text-slate-600">
            The benefit curve says what you pay as a function of how long the job takes, in seconds after you submit it. The market admits the job only if
            this beats the cost of running it.
          </p>
          <BenefitEditor draft={benefit} onChange={setBenefit} showErrors={showErrors} />
        </Card>

        <Card title="Details">
          <div className="grid gap-4 sm:grid-cols-2">
            <Field label="Job name" hint="Shown in your job list.">
              {(p) => <input {...p} value={name} placeholder={mode === "example" ? (example?.title ?? "") : (upload.fileName ?? "My job")} onChange={(e) => setName(e.target.value)} className={inputClass} />}
            </Field>
            <Field label="Replicas per task" hint="Run each task on this many machines and compare outputs (1 to 5)." error={err("replicas")}>
              {(p) => <input {...p} type="number" min={1} max={5} step={1} value={replicas} onChange={(e) => setReplicas(e.target.value)} className={inputClass} />}
            </Field>
            <Field
              label="Spending limit (credits, optional)"
              hint="You pay the quoted price while the tasks take the work you said. If they turn out to take more, the charge follows the work up to this limit; empty: never more than the quote."
              error={err("maxSpend")}
            >
              {(p) => <input {...p} type="number" min={0} step="any" value={maxSpend} placeholder="the quoted price" onChange={(e) => setMaxSpend(e.target.value)} className={inputClass} />}
            </Field>
          </div>
          <label className="mt-4 flex items-start gap-2 text-sm text-slate-800">
            <input type="checkbox" checked={nameToProducers} onChange={(e) => setNameToProducers(e.target.checked)} className="mt-0.5 accent-indigo-600" />
            <span>
              Show this job&apos;s name to the producers who run it
              <span className="block text-xs text-slate-600">They always see its short id on their statements; with this, its name too.</span>
            </span>
          </label>
        </Card>
      </div>

      <aside className="space-y-4 lg:sticky lg:top-6 lg:self-start">
        <Card title="Ask the market">
          <p className="text-sm text-slate-600">A quote shows what the market would decide now, without committing anything.</p>
          <div className="mt-4 flex flex-col gap-2">
            <Button variant="secondary" onClick={onQuote} busy={quote.isPending} disabled={submit.isPending || upload.reading}>
              Get a quote
            </Button>
            <Button type="submit" busy={submit.isPending} disabled={quote.isPending || upload.reading}>
              Submit job
            </Button>
          </div>
          <BalanceCheck balance={balance.data} highest={highest} refused={reasonCode(submit.error) === "insufficient-credits"} quoted={answer?.kind === "quote"} />
          {mode === "upload" && curve ? (
            <details open className="mt-4 text-sm" data-testid="form-job-file">
              <summary className="cursor-pointer font-medium text-slate-800">The job file this submits</summary>
              <p className="mt-1 text-xs text-slate-600">The same job as JSON, for the job-file tab or the cyclemarket command line.</p>
              <pre className="mt-2 max-h-64 overflow-auto rounded bg-slate-50 p-2 font-mono text-xs">
                {JSON.stringify(formJobFile(uploadForm(name.trim() || (upload.fileName ?? "My job"), curve)), null, 2)}
              </pre>
            </details>
          ) : null}
          {showErrors && Object.keys(errors).length > 0 ? (
            <div className="mt-4">
              <Alert tone="error" title="Check the form">
                <ul className="list-disc pl-4">
                  {Object.entries(errors).map(([k, v]) => (
                    <li key={k}>{v}</li>
                  ))}
                </ul>
              </Alert>
            </div>
          ) : null}
          {sendProblem ? (
            <div className="mt-4" data-testid="send-problem">
              <Alert tone="error" title="Not sent">
                {sendProblem}
              </Alert>
            </div>
          ) : null}
          {busyError ? (
            <div className="mt-4">
              <Alert tone="error" title={submit.error ? "The job was not submitted" : "No quote"}>
                {describeError(busyError)}
              </Alert>
            </div>
          ) : null}
        </Card>
        {answer ? <AnswerView answer={answer} /> : null}
      </aside>
    </form>
  );
}

function reasonCode(error: unknown): string | null {
  const reason = (error as { data?: { reason?: unknown } } | null)?.data?.reason;
  return isReason(reason) ? reason.code : null;
}

/**
 * The balance beside the submit button, and a warning when the escrow may not fit in it. The
 * escrow is at most the highest benefit (the price and a contingency, under posted prices), so
 * only a quote says what it is: once there is one, the quote says it, and this says nothing more.
 */
function BalanceCheck({ balance: held, highest, refused, quoted }: { balance: ReturnType<typeof useBalance>["data"]; highest: number | null; refused: boolean; quoted: boolean }) {
  if (!held) return null;
  const balance = held.consumerBalance;
  const over = highest != null && highest > balance;
  return (
    <div className="mt-4 space-y-3 border-t border-slate-100 pt-4">
      <dl className="space-y-1 text-sm">
        <div className="flex justify-between gap-3">
          <dt className="text-slate-500">Your balance</dt>
          <dd className="font-semibold tabular-nums text-slate-900" data-testid="available-balance">
            {credits(balance)}
          </dd>
        </div>
        <div className="flex justify-between gap-3">
          <dt className="text-slate-500">Held in escrow if admitted, at most</dt>
          <dd className={cx("tabular-nums", over ? "font-semibold text-rose-700" : "text-slate-900")}>{credits(highest)}</dd>
        </div>
      </dl>
      {over && !refused && !quoted ? (
        <Alert tone="warning" title="Perhaps not enough credits">
          <span data-testid="insufficient-credits">
            This job&apos;s highest benefit ({credits(highest)}) is more than your balance ({credits(balance)}). While the job runs the market holds up to that in
            escrow, so it may refuse the job: get a quote to see what it needs, or lower the benefit curve.
          </span>
        </Alert>
      ) : null}
    </div>
  );
}

function mandelbrotTiles(params: Record<string, string>): number {
  const image = Number(params.imageSize ?? 512);
  const tile = Number(params.tileSize ?? 64);
  return image > 0 && tile > 0 ? Math.ceil(image / tile) ** 2 : 0;
}

const PARAM_LABELS: Record<string, string> = {
  samplesPerTask: "Samples per task",
  start: "Range start",
  end: "Range end",
  imageSize: "Image size (pixels)",
  tileSize: "Tile size (pixels)",
  maxIterations: "Maximum iterations",
};

function paramLabel(key: string): string {
  return PARAM_LABELS[key] ?? key.replace(/([A-Z])/g, " $1").replace(/^./, (c) => c.toUpperCase());
}

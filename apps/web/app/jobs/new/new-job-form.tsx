"use client";
import { useRouter } from "next/navigation";
import { useEffect, useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC, type RouterInputs, type RouterOutputs } from "@/lib/trpc";
import { describeError, isReason } from "@/lib/reasons";
import { bytes, credits, seconds } from "@/lib/format";
import { maxBenefit } from "@cyclemarket/costbenefit";
import { useStatement } from "@/components/balance";
import { BenefitEditor, DEFAULT_BENEFIT, buildCurve, type BenefitDraft } from "@/components/benefit-editor";
import type { DecisionRecord } from "@/components/decision";
import { AnswerView } from "./answer-view";
import { formJobFile } from "@/lib/form-job-file";
import { Alert, Button, Card, Field, Loading, cx, inputClass } from "@/components/ui";

type SubmitJob = RouterInputs["jobs"]["submit"];
type Example = RouterOutputs["jobs"]["examples"][number];
type Mode = "example" | "upload";

const MAX_TASKS = 10_000;
const DEFAULT_TASKS: Record<string, number> = { montecarlo: 20, primes: 20 };

interface UploadDraft {
  fileName: string | null;
  fileSize: number;
  moduleBase64: string | null;
  reading: boolean;
  taskLines: string;
  workPerTask: string;
  memoryMbPerTask: string;
}

/** A file's bytes as base64, without building a giant string by hand. */
function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error ?? new Error("The file could not be read."));
    reader.readAsDataURL(file);
  });
}

/** One task per non-empty line; arguments split on white space. */
function parseTaskLines(text: string): { args: string[] }[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .map((l) => ({ args: l.split(/\s+/) }));
}

export function NewJobForm() {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const examples = useQuery(trpc.jobs.examples.queryOptions(undefined, { staleTime: Infinity }));

  const [mode, setMode] = useState<Mode>("example");
  const [exampleName, setExampleName] = useState("montecarlo");
  const [name, setName] = useState("");
  const [taskCount, setTaskCount] = useState("20");
  const [params, setParams] = useState<Record<string, string>>({});
  const [benefit, setBenefit] = useState<BenefitDraft>(DEFAULT_BENEFIT);
  const [replicas, setReplicas] = useState("1");
  const [upload, setUpload] = useState<UploadDraft>({
    fileName: null,
    fileSize: 0,
    moduleBase64: null,
    reading: false,
    taskLines: "",
    workPerTask: "1",
    memoryMbPerTask: "64",
  });
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

  /** The job to send, or the problems that keep it from being sent. */
  function build(): { job: SubmitJob | null; errors: Record<string, string> } {
    const errors: Record<string, string> = {};
    const { curve, errors: curveErrors } = buildCurve(benefit);
    if (!curve) errors.benefit = Object.values(curveErrors)[0] ?? "The benefit curve is not valid.";
    const reps = Number(replicas);
    if (!Number.isInteger(reps) || reps < 1 || reps > 5) errors.replicas = "Between 1 and 5 replicas.";
    const jobName = name.trim() || (mode === "example" ? (example?.title ?? exampleName) : (upload.fileName ?? "My job"));

    let source: SubmitJob["source"] | null = null;
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
      if (!upload.moduleBase64) errors.module = "Choose a .wasm file.";
      if (uploadTasks.length === 0) errors.tasks = "Give at least one task: one line of arguments per task.";
      if (uploadTasks.length > MAX_TASKS) errors.tasks = `At most ${MAX_TASKS} tasks.`;
      const work = Number(upload.workPerTask);
      if (!(work > 0) || work > 86_400) errors.workPerTask = "A positive number of reference seconds, at most a day.";
      const mem = Number(upload.memoryMbPerTask);
      if (!Number.isInteger(mem) || mem < 1 || mem > 4096) errors.memory = "Whole megabytes from 1 to 4096.";
      source = {
        kind: "upload",
        moduleBase64: upload.moduleBase64 ?? "",
        tasks: uploadTasks.map((t) => ({ args: t.args, stdin: "" })),
        workPerTask: work,
        memoryMbPerTask: mem,
      };
    }
    if (Object.keys(errors).length > 0 || !curve || !source) return { job: null, errors };
    return { job: { name: jobName, source, benefit: curve, replicas: reps }, errors };
  }

  const { errors } = build();
  const statement = useStatement();
  const curve = buildCurve(benefit).curve;
  const highest = curve ? Math.max(0, maxBenefit(curve)) : null;
  const err = (key: string) => (showErrors ? (errors[key] ?? null) : null);

  function ready(): SubmitJob | null {
    setShowErrors(true);
    quote.reset();
    submit.reset();
    return build().job;
  }

  async function onQuote() {
    const job = ready();
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
    const job = ready();
    if (!job) return;
    setAnswer(null);
    try {
      const { jobId, decision } = await submit.mutateAsync(job);
      setAnswer({ kind: "decision", decision, jobId });
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: trpc.jobs.list.queryKey() }),
        queryClient.invalidateQueries({ queryKey: trpc.ledger.statement.queryKey() }),
      ]);
      // A rejected job stays here so the consumer can change the curve and try again.
      if (decision.outcome !== "rejected") router.push(`/jobs/${jobId}`);
    } catch {
      // shown from submit.error
    }
  }

  async function onFile(file: File | null) {
    if (!file) {
      setUpload((u) => ({ ...u, fileName: null, fileSize: 0, moduleBase64: null }));
      return;
    }
    setUpload((u) => ({ ...u, fileName: file.name, fileSize: file.size, moduleBase64: null, reading: true }));
    try {
      const b64 = await readBase64(file);
      setUpload((u) => ({ ...u, moduleBase64: b64, reading: false }));
    } catch {
      setUpload((u) => ({ ...u, reading: false }));
    }
  }

  if (examples.isPending) return <Loading label="Loading the examples…" />;

  return (
    <form onSubmit={onSubmit} className="grid gap-6 lg:grid-cols-[1fr_22rem]" aria-label="New job">
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
              <Field label="Task arguments (one task per line)" hint={`${uploadTasks.length} task${uploadTasks.length === 1 ? "" : "s"}; arguments are separated by spaces.`} error={err("tasks")}>
                {(p) => (
                  <textarea
                    {...p}
                    rows={6}
                    value={upload.taskLines}
                    placeholder={"1000000 0\n1000000 1\n1000000 2"}
                    onChange={(e) => setUpload({ ...upload, taskLines: e.target.value })}
                    className={cx(inputClass, "font-mono")}
                  />
                )}
              </Field>
              <div className="grid gap-4 sm:grid-cols-2">
                <Field label="Work per task (reference seconds)" hint="Seconds one task takes on a speed-1 slot." error={err("workPerTask")}>
                  {(p) => <input {...p} type="number" min={0} step="any" value={upload.workPerTask} onChange={(e) => setUpload({ ...upload, workPerTask: e.target.value })} className={inputClass} />}
                </Field>
                <Field label="Memory per task (MB)" error={err("memory")}>
                  {(p) => <input {...p} type="number" min={1} step={1} value={upload.memoryMbPerTask} onChange={(e) => setUpload({ ...upload, memoryMbPerTask: e.target.value })} className={inputClass} />}
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
          </div>
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
          <BalanceCheck statement={statement.data} highest={highest} refused={reasonCode(submit.error) === "insufficient-credits"} />
          {mode === "upload" && curve ? (
            <details className="mt-4 text-sm" data-testid="form-job-file">
              <summary className="cursor-pointer font-medium text-slate-800">The job file this submits</summary>
              <p className="mt-1 text-xs text-slate-600">The same job as JSON, for the job-file tab or the cyclemarket command line.</p>
              <pre className="mt-2 max-h-64 overflow-auto rounded bg-slate-50 p-2 font-mono text-xs">
                {JSON.stringify(
                  formJobFile({
                    name: name.trim() || (upload.fileName ?? "My job"),
                    moduleName: upload.fileName ?? "program.wasm",
                    tasks: uploadTasks,
                    benefit: curve,
                    replicas: Number(replicas) || 1,
                    workPerTask: Number(upload.workPerTask) || 1,
                    memoryMb: Number(upload.memoryMbPerTask) || 64,
                  }),
                  null,
                  2,
                )}
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

/** The balance beside the submit button, and a warning when the escrow would not fit in it. */
function BalanceCheck({ statement, highest, refused }: { statement: ReturnType<typeof useStatement>["data"]; highest: number | null; refused: boolean }) {
  if (!statement) return null;
  const balance = statement.consumerBalance;
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
          <dt className="text-slate-500">Held in escrow if admitted</dt>
          <dd className={cx("tabular-nums", over ? "font-semibold text-rose-700" : "text-slate-900")}>{credits(highest)}</dd>
        </div>
      </dl>
      {over && !refused ? (
        <Alert tone="warning" title="Not enough credits">
          <span data-testid="insufficient-credits">
            This job&apos;s highest benefit ({credits(highest)}) is more than your balance ({credits(balance)}). The market holds the highest benefit in
            escrow while the job runs, so it will refuse the job: lower the benefit curve, or wait for your running jobs to settle.
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

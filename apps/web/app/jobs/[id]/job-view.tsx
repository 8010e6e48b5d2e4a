"use client";
import Link from "next/link";
import { useEffect, useMemo, useRef, type ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import {
  ExampleName,
  combineExample,
  fromBase64,
  mandelbrotRgba,
  type ExampleResult,
  type MandelbrotResult,
  type MonteCarloResult,
  type PrimesResult,
} from "@cyclemarket/worker-runtime";
import { useTRPC, useTRPCClient, type RouterOutputs } from "@/lib/trpc";
import { credits, dateTime, number, relative, seconds } from "@/lib/format";
import { describeError, describeReason, errorCode, failureWords } from "@/lib/reasons";
import { DecisionView, asDecision } from "@/components/decision";
import { Alert, Badge, ButtonLink, Card, EmptyState, Loading, PageHeader, ProgressBar } from "@/components/ui";
import { CancelJob } from "./cancel-job";
import { NoJob } from "./short-job-id";
import { MoneyCard } from "./money-card";
import { TaskOutputs } from "./task-outputs";
import { ProgressChart } from "./progress-chart";
import { shortId } from "@cyclemarket/client/job-file";

type Job = RouterOutputs["jobs"]["get"];
type Output = RouterOutputs["jobs"]["outputs"][number];

const UNFINISHED = new Set(["admitted", "running", "delayed"]);
const OUTPUT_PAGE = 1000;

export function JobView({ jobId }: { jobId: string }) {
  const trpc = useTRPC();
  const job = useQuery({
    ...trpc.jobs.get.queryOptions({ jobId }),
    // Live while the job can still change; quiet once it is finished.
    refetchInterval: (q) => (q.state.data && !UNFINISHED.has(q.state.data.status) ? false : 1000),
  });

  if (job.isPending) return <Loading label="Loading the job…" />;
  if (job.isError) {
    const code = errorCode(job.error);
    return (
      <NoJob tone={code === "NOT_FOUND" ? "warning" : "error"} title={code === "NOT_FOUND" ? "No such job" : "The job could not be loaded"}>
        {code === "NOT_FOUND" ? "This job does not exist, or it belongs to someone else." : describeError(job.error)}
      </NoJob>
    );
  }
  return <JobDetails job={job.data} />;
}

function JobDetails({ job }: { job: Job }) {
  const decision = asDecision(job.decision);
  const example = ExampleName.safeParse(job.example);
  const finished = !UNFINISHED.has(job.status);
  const failure = job.failure;
  // The one live estimate the page shows (Timing, the chart): the market's, never before this moment
  // (the page's last read of it may be a second old).
  const eta = job.estimate ? Math.max(job.estimate.completionAt, Date.now()) : null;
  const outputs = useOutputs(job.id, example.success ? job.tasksDone : 0);
  const live: ExampleResult | null = useMemo(() => {
    if (!example.success) return null;
    const final = finalResult(job.result, example.data);
    if (final) return final;
    if (!outputs.length) return null;
    return combineExample(example.data, outputs.map((o) => o.stdoutText ?? ""));
  }, [example.success, example.data, job.result, outputs]);

  return (
    <>
      <PageHeader
        title={job.name}
        description={
          <>
            {example.success ? `${exampleTitle(example.data)} · ` : "Uploaded module · "}
            submitted {dateTime(job.submittedAt)}
          </>
        }
        actions={<ButtonLink href="/jobs/new" variant="secondary">New job</ButtonLink>}
      />
      <div className="grid grid-cols-1 gap-6 lg:grid-cols-[minmax(0,1fr)_20rem]">
        <div className="space-y-6">
          <Card title="Progress" actions={<Badge value={job.status} testId="job-status" />}>
            <ProgressBar value={job.tasksDone} max={job.taskCount} label="Tasks done" />
            <p className="mt-2 text-sm text-slate-600" data-testid="job-progress">
              {job.tasksDone} of {job.taskCount} tasks done
              {!finished ? ` · ${job.tasks.leased} running · ${job.tasks.queued} queued${job.tasks.pending ? ` · ${job.tasks.pending} waiting for a machine` : ""}` : ""}
              {job.tasks.failed ? ` · ${job.tasks.failed} ${job.status === "cancelled" ? "stopped" : "failed"}` : ""}
            </p>
            <p className="mt-1 text-xs text-slate-500">{statusLine(job)}</p>
            {!finished ? <WaitingForMachines waiting={job.waiting} /> : null}
            {job.replicas > 1 ? (
              <p className="mt-1 text-xs text-slate-500" data-testid="job-replicas">
                Each task runs on {job.replicas} machines of different owners; a result counts when owners in the majority agree on their outputs.
                {job.verification && job.verification.tasksVerified > 0
                  ? ` ${job.verification.tasksVerified} of ${job.taskCount} tasks verified so far, each by at least ${job.verification.fewestOwnersAgreeing} independent owners.`
                  : ""}
              </p>
            ) : null}
            <CancelJob jobId={job.id} status={job.status} />
          </Card>

          <ProgressChart jobId={job.id} live={!finished} expectedAt={eta} quotedAt={job.expectedCompletionAt} />

          {failure ? (
            <Alert tone="error" title="The job failed">
              {describeReason(failure)}
              {failure.code === "task-failed" && failure.stderr?.trim() ? (
                <pre className="mt-2 max-h-40 overflow-auto rounded bg-rose-100/60 p-2 text-xs">{failure.stderr}</pre>
              ) : null}
            </Alert>
          ) : null}

          <FailedRuns failures={job.failures} />

          <ResultView job={job} result={live} finished={finished} />

          {decision ? <DecisionView decision={decision} title="The market's decision" testId="decision" quoted /> : null}
        </div>

        <aside className="space-y-6">
          <MoneyCard job={job} />
          <Card title="Timing">
            <dl className="space-y-2 text-sm">
              <Row label="Submitted" value={dateTime(job.submittedAt)} />
              <Row label="Decided" value={dateTime(job.decidedAt)} />
              {eta !== null ? <Row label="Expected completion" value={`${dateTime(eta)} (${relative(eta)})`} testId="job-eta" /> : null}
              <Row label="Quoted completion" value={dateTime(job.expectedCompletionAt)} testId="job-quoted-completion" />
              {finished ? <Row label="Completed" value={dateTime(job.completedAt)} /> : null}
              <Row label="Work per task" value={workEstimateText(job.workEstimate)} testId="work-estimate" />
              <Row label="Replicas per task" value={String(job.replicas)} />
            </dl>
            {job.estimate ? (
              <p className="mt-3 text-xs text-slate-600" data-testid="job-eta-basis">
                {job.estimate.basis === "measured-pace"
                  ? `Expected from the pace its tasks are finishing (${job.tasksDone} of ${job.taskCount} done); it moves as they finish.`
                  : "Expected as the market planned it, until its first tasks finish and their pace is measured."}
              </p>
            ) : null}
          </Card>
          {job.parts?.length ? <PartsCard parts={job.parts} /> : null}
          <Card title="Machines that worked on it">
            {job.machines.length === 0 ? (
              <p className="text-sm text-slate-500">{finished ? "No machine finished a task of this job." : "No results yet."}</p>
            ) : (
              <ul className="divide-y divide-slate-100 text-sm" aria-label="Machines">
                {job.machines.map((m, i) => (
                  <li key={m.id ?? i} className="flex items-center justify-between gap-2 py-2">
                    <span className="min-w-0">
                      <bdi className="block truncate font-medium text-slate-900">{m.name ?? (m.id ? shortId(m.id) : "unknown machine")}</bdi>
                      {m.kind ? <span className="text-xs text-slate-500">{m.kind}</span> : null}
                    </span>
                    <span className="shrink-0 tabular-nums text-slate-600">
                      {m.tasks} task{m.tasks === 1 ? "" : "s"}
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </Card>
        </aside>
      </div>
    </>
  );
}

/**
 * The job's failed runs, by task: a failure counts as the program's (paid, and towards the job's
 * limit) only once a machine of another owner reproduced it; until then the task runs again.
 */
function FailedRuns({ failures }: { failures: Job["failures"] }) {
  if (failures.tasks.length === 0) return null;
  return (
    <Card title="Failed runs">
      <p className="mb-3 text-sm text-slate-600">
        A failure is the program&apos;s only when a machine of another owner reproduces it: then the runs are paid, and the job stops after{" "}
        {failures.failureLimit} such task{failures.failureLimit === 1 ? "" : "s"}. A failure nobody reproduced is not paid, and the task runs again elsewhere.
      </p>
      <table className="w-full text-left text-sm" data-testid="failed-runs">
        <thead className="text-xs text-slate-500">
          <tr>
            <th scope="col" className="py-1 pr-3 font-medium">Task</th>
            <th scope="col" className="py-1 pr-3 font-medium">What failed</th>
            <th scope="col" className="py-1 pr-3 font-medium">Reproduced</th>
            <th scope="col" className="py-1 font-medium">Task now</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {failures.tasks.map((f) => (
            <tr key={f.taskIndex}>
              <td className="py-1.5 pr-3 tabular-nums">{f.taskIndex}</td>
              <td className="py-1.5 pr-3">{f.codes.map(failureWords).join("; ")}</td>
              <td className="py-1.5 pr-3">
                {f.confirmed > 0 ? `yes: ${f.confirmed} of ${f.runs} run${f.runs === 1 ? "" : "s"} paid` : `not yet: ${f.runs} run${f.runs === 1 ? "" : "s"} unpaid`}
              </td>
              <td className="py-1.5">{f.status}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}

/** Why copies of this job's tasks cannot start now for want of a suitable machine. */
function WaitingForMachines({ waiting }: { waiting: Job["waiting"] }) {
  if (waiting.total === 0) return null;
  const more = waiting.total - waiting.reasons.length;
  return (
    <div className="mt-3 rounded-lg border border-amber-200 bg-amber-50 p-3 text-sm text-amber-900" data-testid="job-waiting">
      <p className="font-medium">Waiting for another machine</p>
      <ul className="mt-1 list-disc space-y-1 pl-5" aria-label="Why tasks are waiting">
        {waiting.reasons.map((r, i) => (
          <li key={i}>{describeReason(r)}</li>
        ))}
      </ul>
      {more > 0 ? <p className="mt-1 text-xs">And {more} more cop{more === 1 ? "y" : "ies"} waiting for the same reason.</p> : null}
    </div>
  );
}

function Row({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="flex justify-between gap-3">
      <dt className="text-slate-500">{label}</dt>
      <dd className="text-right text-slate-900" data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}

/** Where the work per task the market plans with comes from: the consumer, or the job's pilots. */
function workEstimateText(w: RouterOutputs["jobs"]["get"]["workEstimate"]): string {
  if (w.kind === "provisional") return `provisional: ${w.pilots} pilot tasks run first`;
  if (w.kind === "measured") return `${seconds(w.workPerTask)}, measured by ${w.pilots} pilot tasks`;
  return seconds(w.workPerTask);
}

/** A job split across Market Managers: each part, its tasks, its manager, how far it is and what it cost. */
function PartsCard({ parts }: { parts: NonNullable<Job["parts"]> }) {
  return (
    <Card title="Split across Market Managers">
      <p className="text-xs text-slate-600">No one manager could run it in time: each part runs on its manager&apos;s machines and is settled by it; you pay the sum.</p>
      <ul className="mt-2 divide-y divide-slate-100 text-sm" aria-label="Parts" data-testid="job-parts">
        {parts.map((p) => (
          <li key={p.jobId} className="flex items-center justify-between gap-2 py-2" data-testid="job-part">
            <span className="min-w-0">
              <span className="block font-medium text-slate-900">
                Tasks {p.fromTask} to {p.fromTask + p.tasks - 1}
              </span>
              <span className="text-xs text-slate-500">
                {p.manager ?? "no manager"} · {p.tasksDone} of {p.tasks} done
              </span>
            </span>
            <span className="shrink-0 text-right tabular-nums text-slate-600">
              <Badge value={p.status} />
              <span className="block text-xs">{p.charged != null ? credits(p.charged) : p.quotedPrice != null ? `quoted ${credits(p.quotedPrice)}` : ""}</span>
            </span>
          </li>
        ))}
      </ul>
    </Card>
  );
}

function statusLine(job: Job): string {
  switch (job.status) {
    case "delayed":
      return "Waiting: the market will admit it when running it becomes worth the cost.";
    case "admitted":
      return "Admitted: its tasks are queued on machines.";
    case "running":
      return "Running on producers' machines; this page updates every second.";
    case "completed":
      return "Completed.";
    case "rejected":
      return "Rejected: no task of this job will run.";
    case "failed":
      return "Failed: see why below.";
    case "cancelled":
      return "Cancelled: its unfinished tasks were stopped.";
    default:
      return job.status;
  }
}

/** Finished tasks' outputs (one per task, the accepted one), fetched again only when more tasks are done. */
function useOutputs(jobId: string, done: number): Output[] {
  const client = useTRPCClient();
  const query = useQuery({
    queryKey: ["job-outputs", jobId, done],
    queryFn: () => client.jobs.outputs.query({ jobId, fromIndex: 0, limit: OUTPUT_PAGE }),
    enabled: done > 0,
    staleTime: Infinity,
    placeholderData: (previous) => previous,
  });
  return query.data ?? NO_OUTPUTS;
}
const NO_OUTPUTS: Output[] = [];

function finalResult(result: unknown, kind: ExampleName): ExampleResult | null {
  if (typeof result !== "object" || result === null) return null;
  return (result as { kind?: unknown }).kind === kind ? (result as ExampleResult) : null;
}

function exampleTitle(name: ExampleName): string {
  return { montecarlo: "Monte Carlo pi", mandelbrot: "Mandelbrot tiles", primes: "Prime counting" }[name];
}

function ResultView({ job, result, finished }: { job: Job; result: ExampleResult | null; finished: boolean }) {
  const done = job.status === "completed";
  if (job.status === "rejected" || job.status === "failed" || job.status === "cancelled") return null;
  if (!result) {
    if (job.example) {
      return (
        <Card title="Result">
          <EmptyState title={finished ? "No result" : "The result appears here as tasks finish"} />
        </Card>
      );
    }
    return (
      <Card title="Result">
        <TaskOutputs jobId={job.id} done={job.tasksDone} total={job.taskCount} />
      </Card>
    );
  }
  const file = `${fileName(job.name)}-${shortId(job.id)}`;
  switch (result.kind) {
    case "montecarlo":
      return <MonteCarloView result={result} done={done} actions={<ResultActions jobId={job.id} result={result} file={file} />} />;
    case "primes":
      return <PrimesView result={result} done={done} actions={<ResultActions jobId={job.id} result={result} file={file} />} />;
    case "mandelbrot":
      return <MandelbrotView result={result} done={done} file={file} jobId={job.id} />;
  }
}

/** A job's name as a file name: letters, digits and dashes. */
const fileName = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40) || "job";

/** Has the browser save these bytes under this name (a link to an object URL, clicked, then let go). */
function save(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** An example job's result: its numbers as JSON, its picture as PNG (Mandelbrot), and "Run again" (the same job, to edit first). */
function ResultActions({ jobId, result, file, picture }: { jobId: string; result: ExampleResult; file: string; picture?: () => HTMLCanvasElement | null }) {
  const link = "rounded-md px-2 py-1 text-sm font-medium text-indigo-700 underline underline-offset-2 hover:bg-indigo-50";
  return (
    <div className="flex flex-wrap items-center gap-1" role="group" aria-label="Result actions">
      {picture ? (
        <button
          type="button"
          className={link}
          data-testid="download-png"
          onClick={() => picture()?.toBlob((blob) => blob && save(blob, `${file}.png`), "image/png")}
        >
          Download PNG
        </button>
      ) : null}
      <button type="button" className={link} data-testid="download-json" onClick={() => save(new Blob([JSON.stringify(result, null, 2)], { type: "application/json" }), `${file}.json`)}>
        Download JSON
      </button>
      <Link href={`/jobs/new?again=${jobId}`} className={link} data-testid="run-again">
        Run again
      </Link>
    </div>
  );
}

function MonteCarloView({ result, done, actions }: { result: MonteCarloResult; done: boolean; actions: ReactNode }) {
  return (
    <Card title={done ? "Result" : "Result so far"} actions={actions}>
      <div className="flex flex-wrap items-end gap-x-10 gap-y-4">
        <div>
          <p className="text-sm text-slate-500">{done ? "Estimate of pi" : "Running estimate of pi"}</p>
          {done ? (
            <p className="text-5xl font-semibold tabular-nums tracking-tight text-indigo-700" aria-label="Estimate of pi" data-testid="pi-estimate">
              {Number.isFinite(result.pi) ? result.pi.toFixed(6) : "—"}
            </p>
          ) : (
            <p className="text-4xl font-semibold tabular-nums tracking-tight text-slate-400" data-testid="pi-running-estimate">
              {Number.isFinite(result.pi) ? result.pi.toFixed(6) : "—"}
            </p>
          )}
        </div>
        <dl className="grid grid-cols-2 gap-x-6 gap-y-1 text-sm">
          <dt className="text-slate-500">± one standard error</dt>
          <dd className="tabular-nums">{number(result.standardError, 6)}</dd>
          <dt className="text-slate-500">Off from π by</dt>
          <dd className="tabular-nums">{number(result.absoluteError, 6)}</dd>
          <dt className="text-slate-500">Samples</dt>
          <dd className="tabular-nums">{number(result.total, 0)}</dd>
          <dt className="text-slate-500">Tasks combined</dt>
          <dd className="tabular-nums" data-testid="tasks-combined">{result.tasks}</dd>
        </dl>
      </div>
      {result.invalidOutputs ? <p className="mt-3 text-xs text-amber-700">{result.invalidOutputs} task outputs could not be read and were left out.</p> : null}
    </Card>
  );
}

function PrimesView({ result, done, actions }: { result: PrimesResult; done: boolean; actions: ReactNode }) {
  return (
    <Card title={done ? "Result" : "Result so far"} actions={actions}>
      <p className="text-sm text-slate-500">{done ? "Primes found" : "Primes found so far"}</p>
      <p className="text-5xl font-semibold tabular-nums tracking-tight text-indigo-700" aria-label={done ? "Number of primes" : "Primes so far"} data-testid={done ? "primes-count" : "primes-running-count"}>
        {number(result.count, 0)}
      </p>
      <p className="mt-2 text-sm text-slate-600">
        {result.start != null && result.end != null ? `Counted in [${number(result.start, 0)}, ${number(result.end, 0)}) ` : ""}
        covering {number(result.covered, 0)} numbers in {result.tasks} tasks.
      </p>
    </Card>
  );
}

function MandelbrotView({ result, done, file, jobId }: { result: MandelbrotResult; done: boolean; file: string; jobId: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const el = canvas.current;
    if (!el || result.width === 0) return;
    el.width = result.width;
    el.height = result.height;
    const ctx = el.getContext("2d");
    if (!ctx) return;
    const rgba = mandelbrotRgba(result, fromBase64(result.pixels));
    ctx.putImageData(new ImageData(rgba, result.width, result.height), 0, 0);
  }, [result]);
  const coverage = result.width ? result.coveredPixels / (result.width * result.height) : 0;
  return (
    <Card title={done ? "Result" : "The picture so far"} actions={<ResultActions jobId={jobId} result={result} file={file} picture={() => canvas.current} />}>
      <canvas
        ref={canvas}
        role="img"
        aria-label="Mandelbrot picture"
        data-testid="mandelbrot-canvas"
        className="aspect-square w-full max-w-lg rounded-lg bg-slate-900 [image-rendering:pixelated]"
      />
      <p className="mt-2 text-sm text-slate-600">
        {result.tasks} tiles, {Math.round(coverage * 100)}% of the picture, {result.maxIterations} iterations at most.
        {coverage < 1 ? " Tiles not back yet are striped grey; black is the inside of the set." : ""}
      </p>
    </Card>
  );
}

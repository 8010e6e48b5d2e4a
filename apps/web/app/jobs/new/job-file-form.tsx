"use client";
import { useRouter } from "next/navigation";
import { useState, type DragEvent } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { checkJobFile, jobFileIssueWords, type JobRequest } from "@cyclemarket/client/job-file";
import { NotSent, pageReader, requestForJobFile } from "@/lib/job-file-request";
import { useTRPCClient } from "@/lib/trpc";
import { describeError } from "@/lib/reasons";
import { bytes } from "@/lib/format";
import { quoteChoice, type DecisionRecord } from "@/components/decision";
import { AnswerView, type Answer } from "./answer-view";
import { Alert, Button, Card, cx, inputClass } from "@/components/ui";

const EXAMPLE = `{
  "name": "echo a thousand lines",
  "module": "program.wasm",
  "benefit": { "kind": "deadline", "value": 50, "deadline": 600 },
  "replicas": 1,
  "limits": { "memoryMb": 64, "wallSeconds": 60 },
  "tasks": { "count": 1000, "args": ["{i}"], "stdin": "line {i}\\n" }
}`;

/**
 * Submits a job file: the same JSON the `cyclemarket` CLI reads. Drop the job file, its module
 * and any files it names; paths in the job file are matched by their path, then by file name.
 * The module is uploaded once by hash; refusals come back as words.
 */
export function JobFileForm({ initial }: { initial?: string }) {
  const client = useTRPCClient();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [text, setText] = useState(initial ?? EXAMPLE);
  const [files, setFiles] = useState<Map<string, Uint8Array>>(new Map());
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState<"quote" | "submit" | null>(null);
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [dragging, setDragging] = useState(false);

  async function addFiles(list: FileList | null) {
    if (!list) return;
    const next = new Map(files);
    for (const f of Array.from(list)) {
      const data = new Uint8Array(await f.arrayBuffer());
      if (f.name.endsWith(".json")) setText(new TextDecoder().decode(data));
      else next.set((f as File & { webkitRelativePath?: string }).webkitRelativePath || f.name, data);
    }
    setFiles(next);
  }

  /** The request the job file makes, after uploading its module; null with `problem` set when it cannot. */
  async function build(): Promise<JobRequest | null> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      setProblem(`The job file is not JSON: ${(e as Error).message}.`);
      return null;
    }
    const checked = checkJobFile(json);
    if (!checked.ok) {
      setProblem(`The job file is not valid: ${jobFileIssueWords(checked.issues)}.`);
      return null;
    }
    try {
      return await requestForJobFile(client, checked.job, pageReader(files));
    } catch (e) {
      setProblem(e instanceof NotSent ? e.message : describeError(e));
      return null;
    }
  }

  async function run(kind: "quote" | "submit") {
    // A submission goes to the Market Manager whose quote is shown, or is split as it shows, when one is.
    const chosen = quoteChoice(answer?.kind === "quote" ? answer.decision : undefined);
    setProblem(null);
    setAnswer(null);
    setBusy(kind);
    try {
      const request = await build();
      if (!request) return;
      if (kind === "quote") {
        setAnswer({ kind: "quote", decision: (await client.jobs.quote.mutate(request)) as DecisionRecord });
      } else {
        const { jobId, decision } = await client.jobs.submit.mutate({ ...request, ...chosen });
        setAnswer({ kind: "decision", decision: decision as DecisionRecord, jobId });
        await queryClient.invalidateQueries();
        if (decision.outcome !== "rejected") router.push(`/jobs/${jobId}`);
      }
    } catch (e) {
      setProblem(describeError(e));
    } finally {
      setBusy(null);
    }
  }

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    void addFiles(e.dataTransfer.files);
  };

  return (
    <Card title="Job file">
      <p className="text-sm text-slate-600">
        The same JSON file the <code>cyclemarket</code> command line reads: the module, the benefit curve, per-task limits and the tasks, listed or
        generated with <code>{"{i}"}</code>. Drop the job file, its module and the files it names below, or edit it here.
      </p>
      <div
        onDragOver={(e) => (e.preventDefault(), setDragging(true))}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
        className={cx("mt-4 rounded-lg border-2 border-dashed p-4 text-sm", dragging ? "border-indigo-500 bg-indigo-50" : "border-slate-300")}
      >
        <label className="block font-medium text-slate-800">
          Job file, module and input files
          <input type="file" multiple aria-label="Job file, module and input files" className="mt-2 block text-sm" onChange={(e) => void addFiles(e.target.files)} />
        </label>
        {files.size ? (
          <ul className="mt-2 text-xs text-slate-600" aria-label="Files added">
            {[...files.entries()].map(([name, data]) => (
              <li key={name}>
                {name} · {bytes(data.length)}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      <label className="mt-4 block text-sm font-medium text-slate-800">
        The job file
        <textarea aria-label="The job file" value={text} onChange={(e) => setText(e.target.value)} rows={12} spellCheck={false} className={cx(inputClass, "mt-1 font-mono text-xs")} />
      </label>
      {problem ? (
        <div className="mt-3" data-testid="job-file-problem">
          <Alert tone="error" title="Not sent">{problem}</Alert>
        </div>
      ) : null}
      <div className="mt-4 flex gap-3">
        <Button variant="secondary" onClick={() => void run("quote")} busy={busy === "quote"} disabled={busy !== null}>
          Get a quote
        </Button>
        <Button onClick={() => void run("submit")} busy={busy === "submit"} disabled={busy !== null}>
          Submit job file
        </Button>
      </div>
      {answer ? (
        <div className="mt-4">
          <AnswerView answer={answer} />
        </div>
      ) : null}
    </Card>
  );
}

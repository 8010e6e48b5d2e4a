"use client";
import Link from "next/link";
import { useEffect, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { number, seconds } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { Alert, Button, EmptyState, Loading } from "@/components/ui";

const PAGE = 50;

/**
 * Every task's accepted output, a page at a time: text as text; binary output as its size, its
 * SHA-256 and a link to the raw bytes. "Download all" is one archive of every output with a
 * manifest (results.json).
 */
export function TaskOutputs({ jobId, done, total }: { jobId: string; done: number; total: number }) {
  const trpc = useTRPC();
  // The first index of each page seen so far: pages are keyed by where they start, since tasks
  // finish out of order and only finished tasks are listed.
  const [starts, setStarts] = useState<number[]>([0]);
  const from = starts[starts.length - 1]!;
  const outputs = useQuery({ ...trpc.jobs.outputs.queryOptions({ jobId, fromIndex: from, limit: PAGE }), placeholderData: (p) => p });
  // New outputs arrive as tasks finish: read the page again whenever the count of finished tasks moves.
  const { refetch } = outputs;
  useEffect(() => {
    void refetch();
  }, [done, refetch]);
  const archive = `/api/jobs/${jobId}/archive.tar`;
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <span className="text-slate-600">
          {number(done, 0)} of {number(total, 0)} tasks have output
        </span>
        {done > 0 ? (
          <a href={archive} download className="font-medium text-indigo-700 underline" data-testid="download-all">
            Download all (tar: each task's .out and .err, and results.json)
          </a>
        ) : null}
        <Link href={`/jobs/new?again=${jobId}`} className="font-medium text-indigo-700 underline" data-testid="run-again">
          Run again (the same job file, to edit)
        </Link>
      </div>
      {outputs.isPending ? (
        <Loading label="Loading outputs…" />
      ) : outputs.isError ? (
        <Alert tone="error">{describeError(outputs.error)}</Alert>
      ) : outputs.data.length === 0 ? (
        <EmptyState title="No outputs yet" />
      ) : (
        <ol className="space-y-2 text-sm" aria-label="Task outputs">
          {outputs.data.map((o) => (
            <li key={o.index} className="rounded-lg bg-slate-50 p-3">
              <div className="text-xs text-slate-500">
                {/* Labelled: "Task 0 · 0 · 13 ms" left the reader to guess which number was what. */}
                Task {o.index}
                {o.args.length ? (
                  <>
                    {" "}· args <bdi className="font-mono">{o.args.join(" ")}</bdi>
                  </>
                ) : null}
                {o.elapsedMs != null ? ` · ran ${seconds(o.elapsedMs / 1000)}` : ""} · on <bdi>{o.machineName}</bdi>
              </div>
              {o.stdoutText !== null ? (
                <pre className="mt-1 max-h-32 overflow-auto whitespace-pre-wrap font-mono text-xs text-slate-800">{o.stdoutText || "(no output)"}</pre>
              ) : (
                <p className="mt-1 text-xs text-slate-700">
                  Binary output, {number(o.bytes, 0)} bytes, SHA-256 <code className="break-all">{o.outputHash}</code>
                </p>
              )}
              <a className="mt-1 inline-block text-xs text-indigo-700 underline" href={`/api/jobs/${jobId}/tasks/${o.index}/stdout`} download={`${o.index}.out`}>
                Download stdout
              </a>
            </li>
          ))}
        </ol>
      )}
      <div className="flex gap-2">
        <Button variant="secondary" disabled={starts.length < 2} onClick={() => setStarts((s) => s.slice(0, -1))}>
          Previous
        </Button>
        <Button
          variant="secondary"
          disabled={!outputs.data || outputs.data.length < PAGE}
          onClick={() => outputs.data && setStarts((s) => [...s, outputs.data[outputs.data.length - 1]!.index + 1])}
        >
          Next
        </Button>
      </div>
    </div>
  );
}

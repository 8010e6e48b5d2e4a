"use client";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterInputs, type RouterOutputs } from "@/lib/trpc";
import { credits, dateTime, time } from "@/lib/format";
import { describeError, describeReason } from "@/lib/reasons";
import { Alert, Badge, Button, Card, EmptyState, Loading, inputClass } from "@/components/ui";
import { shortId } from "@cyclemarket/client/job-file";

type Row = RouterOutputs["admin"]["decisions"]["decisions"][number];
type Outcome = NonNullable<RouterInputs["admin"]["decisions"]["outcome"]>;
export type DecisionFilters = { jobId?: string; machineId?: string; user?: string; outcome?: Outcome };

export const OUTCOMES: { value: Outcome; label: string }[] = [
  { value: "admission", label: "Admissions" },
  { value: "delay", label: "Delays" },
  { value: "rejection", label: "Rejections" },
  { value: "placement", label: "Placements" },
  { value: "move", label: "Moves" },
  { value: "departure", label: "Departures" },
];

const PAGE_SIZE = 50;

/** The numbers behind a decision that its reasons do not already say, as a sentence. */
function detailWords(row: Row): string | null {
  const d = row.detail ?? {};
  const n = (k: string) => (typeof d[k] === "number" ? (d[k] as number) : null);
  if (row.outcome === "admission" && n("price") !== null) return `Quoted ${credits(n("price"))}, expected to complete at ${time(n("completionAt"))}.`;
  if (row.outcome === "placement") {
    const parts = [`${row.tasks} task${row.tasks === 1 ? "" : "s"} on ${row.machineName ?? "a machine"}`];
    if (n("marginalCost") !== null) parts.push(`at a marginal cost of ${credits(n("marginalCost"))}`);
    if (n("expectedFinishAt") !== null) parts.push(`expected to finish by ${time(n("expectedFinishAt"))}`);
    return `${parts.join(", ")}.`;
  }
  // A machine an admin moved to another Market Manager (its reason names both) rather than tasks moved to this machine.
  if (row.outcome === "move" && typeof d.by === "string") return `${row.machineName ?? "The machine"}, moved by the admin ${d.by}.`;
  if (row.outcome === "move") return `Moved to ${row.machineName ?? "another machine"}.`;
  if (row.outcome === "departure") return `${row.tasks} task${row.tasks === 1 ? "" : "s"} on it went back to the market.`;
  return null;
}

function Filters({ value, onChange, fixed }: { value: DecisionFilters; onChange: (f: DecisionFilters) => void; fixed: (keyof DecisionFilters)[] }) {
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const text = (k: string) => (String(form.get(k) ?? "").trim() || undefined);
    onChange({ jobId: text("jobId"), machineId: text("machineId"), user: text("user"), outcome: text("outcome") as Outcome | undefined });
  };
  const show = (k: keyof DecisionFilters) => !fixed.includes(k);
  return (
    <form onSubmit={submit} className="mb-4 grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-5" aria-label="Filter decisions">
      {show("jobId") ? <input name="jobId" defaultValue={value.jobId} placeholder="Job id" aria-label="Job id" className={inputClass} /> : null}
      {show("machineId") ? <input name="machineId" defaultValue={value.machineId} placeholder="Machine id" aria-label="Machine id" className={inputClass} /> : null}
      {show("user") ? <input name="user" type="email" defaultValue={value.user} placeholder="User's email" aria-label="User's email" className={inputClass} /> : null}
      <select name="outcome" defaultValue={value.outcome ?? ""} aria-label="Outcome" className={inputClass}>
        <option value="">Every outcome</option>
        {OUTCOMES.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <Button type="submit" variant="secondary">
        Filter
      </Button>
    </form>
  );
}

/**
 * The market's decisions, newest first, a page at a time, each with its reasons in words. The
 * admin's log (every decision) or one job's own (`jobId` given: its owner may read it).
 */
export function DecisionLog({ initial, jobId }: { initial: DecisionFilters; jobId?: string }) {
  const trpc = useTRPC();
  const [filters, setFilters] = useState<DecisionFilters>(initial);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;
  const adminQuery = useQuery({ ...trpc.admin.decisions.queryOptions({ ...filters, cursor, pageSize: PAGE_SIZE }), enabled: !jobId });
  const jobQuery = useQuery({
    ...trpc.jobs.decisions.queryOptions({ jobId: jobId ?? "00000000-0000-4000-8000-000000000000", outcome: filters.outcome, cursor, pageSize: PAGE_SIZE }),
    enabled: !!jobId,
  });
  const page = jobId ? jobQuery : adminQuery;
  const apply = (f: DecisionFilters) => {
    setFilters(f);
    setCursors([null]);
  };
  return (
    <Card>
      <Filters value={filters} onChange={apply} fixed={jobId ? ["jobId", "machineId", "user"] : []} />
      {page.isPending ? (
        <Loading label="Loading decisions…" />
      ) : page.isError ? (
        <Alert tone="error" title="The decisions could not be loaded">
          {describeError(page.error)}
        </Alert>
      ) : page.data.decisions.length === 0 ? (
        <EmptyState title="No decisions match">The market records each decision as it applies it.</EmptyState>
      ) : (
        <ol className="divide-y divide-slate-100" aria-label="Decisions">
          {page.data.decisions.map((d) => (
            <li key={d.id} className="py-3" data-testid="decision" data-outcome={d.outcome}>
              <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm">
                <Badge value={d.outcome} />
                <span className="text-slate-500">{dateTime(d.at)}</span>
                {d.jobId ? (
                  <Link href={`/jobs/${d.jobId}`} className="font-medium text-indigo-600 hover:underline">
                    <bdi>{d.jobName ?? shortId(d.jobId)}</bdi>
                  </Link>
                ) : null}
                {d.machineName ? <span className="text-slate-700">machine <bdi>{d.machineName}</bdi></span> : null}
                {d.user ? <span className="text-slate-500">{d.user}</span> : null}
              </div>
              <ul className="mt-1 list-disc pl-5 text-sm text-slate-700">
                {d.reasons.map((r, i) => (
                  <li key={i}>{describeReason(r)}</li>
                ))}
                {detailWords(d) ? <li className="text-slate-600">{detailWords(d)}</li> : null}
              </ul>
            </li>
          ))}
        </ol>
      )}
      <nav aria-label="Decision pages" className="mt-4 flex gap-2">
        <Button variant="secondary" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </Button>
        <Button variant="secondary" disabled={!page.data?.next} onClick={() => page.data?.next && setCursors([...cursors, page.data.next])}>
          Older
        </Button>
      </nav>
    </Card>
  );
}

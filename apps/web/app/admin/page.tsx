"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/lib/trpc";
import { credits, dateTime, number, relative } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { RequireRole } from "@/components/session";
import { Alert, Badge, Card, EmptyState, Loading, PageHeader, ProgressBar, Stat } from "@/components/ui";

type Overview = RouterOutputs["admin"]["overview"];

function Dashboard() {
  const trpc = useTRPC();
  const overview = useQuery({ ...trpc.admin.overview.queryOptions(), refetchInterval: 2000 });
  if (overview.isPending) return <Loading label="Loading the market…" />;
  if (overview.isError) return <Alert tone="error" title="The market overview could not be loaded">{describeError(overview.error)}</Alert>;
  const { machines, jobs } = overview.data;
  const active = machines.filter((m) => m.status === "active");
  const unfinished = jobs.filter((j) => ["admitted", "running", "delayed"].includes(j.status));
  return (
    <div className="space-y-6">
      <dl className="grid grid-cols-2 gap-3 md:grid-cols-4">
        <Stat label="Machines in the market" value={active.length} testId="admin-active-machines" />
        <Stat label="Slots" value={active.reduce((s, m) => s + m.slots, 0)} />
        <Stat label="Tasks running" value={active.reduce((s, m) => s + m.running, 0)} />
        <Stat label="Jobs in progress" value={unfinished.length} />
      </dl>
      <MachinesTable machines={machines} />
      <JobsTable jobs={jobs} />
      <p className="text-xs text-slate-400" aria-live="off">
        Refreshed every 2 seconds · last at {dateTime(overview.dataUpdatedAt)}
      </p>
    </div>
  );
}

function MachinesTable({ machines }: { machines: Overview["machines"] }) {
  return (
    <Card title="Machines" className="overflow-x-auto">
      {machines.length === 0 ? (
        <EmptyState title="No machines yet">Open the Produce page in a browser, or start a Node worker with an API token.</EmptyState>
      ) : (
        <table className="min-w-full text-sm" aria-label="Machines">
          <thead className="text-left text-xs uppercase tracking-wide text-slate-500">
            <tr>
              <th scope="col" className="py-2 pr-4">Machine</th>
              <th scope="col" className="py-2 pr-4">Kind</th>
              <th scope="col" className="py-2 pr-4">Status</th>
              <th scope="col" className="py-2 pr-4 text-right">Slots</th>
              <th scope="col" className="py-2 pr-4 text-right">Speed</th>
              <th scope="col" className="py-2 pr-4 text-right">Price / s</th>
              <th scope="col" className="py-2 pr-4 text-right">Queue</th>
              <th scope="col" className="py-2 pr-4 text-right">Running</th>
              <th scope="col" className="py-2">Last heartbeat</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {machines.map((m) => (
              <tr key={m.id} className={m.status === "departed" ? "text-slate-400" : undefined}>
                <td className="py-2 pr-4">
                  <span className="block font-medium text-slate-900">{m.name}</span>
                  <span className="block text-xs text-slate-500">
                    {m.owner} · <span className="font-mono">{m.id.slice(0, 8)}</span>
                  </span>
                </td>
                <td className="py-2 pr-4">
                  <Badge value={m.kind} />
                </td>
                <td className="py-2 pr-4">
                  <Badge value={m.status} />
                </td>
                <td className="py-2 pr-4 text-right tabular-nums">{m.slots}</td>
                <td className="py-2 pr-4 text-right tabular-nums">{number(m.speed, 2)}×</td>
                <td className="py-2 pr-4 text-right tabular-nums">{credits(m.pricePerSecond)}</td>
                <td className="py-2 pr-4 text-right tabular-nums">{m.queued}</td>
                <td className="py-2 pr-4 text-right tabular-nums">{m.running}</td>
                <td className="py-2 text-slate-600">{m.status === "departed" ? `left ${relative(m.departedAt)}` : relative(m.lastHeartbeatAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}

function JobsTable({ jobs }: { jobs: Overview["jobs"] }) {
  return (
    <Card title="Jobs" className="overflow-x-auto">
      {jobs.length === 0 ? (
        <EmptyState title="No jobs yet">Jobs that consumers submit appear here.</EmptyState>
      ) : (
        <table className="min-w-full text-sm" aria-label="Jobs">
          <thead className="text-left text-xs uppercase tracking-wide text-slate-500">
            <tr>
              <th scope="col" className="py-2 pr-4">Job</th>
              <th scope="col" className="py-2 pr-4">Owner</th>
              <th scope="col" className="py-2 pr-4">Status</th>
              <th scope="col" className="py-2 pr-4">Progress</th>
              <th scope="col" className="py-2 pr-4 text-right">Price</th>
              <th scope="col" className="py-2">Submitted</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {jobs.map((j) => (
              <tr key={j.id}>
                <td className="py-2 pr-4">
                  <Link href={`/jobs/${j.id}`} className="font-medium text-indigo-600 hover:underline">
                    {j.name}
                  </Link>
                  <span className="block text-xs text-slate-500">{j.example ?? "uploaded module"}</span>
                </td>
                <td className="py-2 pr-4 text-slate-600">{j.owner}</td>
                <td className="py-2 pr-4">
                  <Badge value={j.status} />
                </td>
                <td className="w-48 py-2 pr-4">
                  <ProgressBar value={j.tasksDone} max={j.taskCount} label={`Progress of ${j.name}`} />
                  <span className="text-xs text-slate-500">
                    {j.tasksDone} / {j.taskCount}
                  </span>
                </td>
                <td className="py-2 pr-4 text-right tabular-nums">{credits(j.charged ?? j.quotedPrice)}</td>
                <td className="py-2 text-slate-600">{dateTime(j.submittedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}

export default function AdminPage() {
  return (
    <>
      <PageHeader title="Market admin" description="Every machine and job in the market, live." />
      <RequireRole role="admin" what="watch the market">
        {() => <Dashboard />}
      </RequireRole>
    </>
  );
}

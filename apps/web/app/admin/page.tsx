"use client";
import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useTRPC, type RouterOutputs } from "@/lib/trpc";
import { credits, dateTime, number, relative } from "@/lib/format";
import { describeAnyReason, describeError } from "@/lib/reasons";
import { RequireRole } from "@/components/session";
import { Alert, Badge, Button, Card, EmptyState, Loading, PageHeader, ProgressBar, Stat, cx } from "@/components/ui";
import { SettingsPanel } from "./settings-panel";
import { HistoryCharts } from "./history-charts";
import { GrantCredits } from "./grant-credits";
import { useState } from "react";
import { shortId } from "@cyclemarket/client/job-file";

type Overview = RouterOutputs["admin"]["overview"];

/** Polled this often only while the live stream is not connected. */
const POLL_MS = 2000;

function Dashboard() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // The market pushes the overview whenever it changes (live.market); the query holds the latest.
  const live = useSubscription(
    trpc.live.market.subscriptionOptions(undefined, {
      onData: (event) => queryClient.setQueryData(trpc.admin.overview.queryKey(), event.data),
    }),
  );
  const connected = live.status === "pending";
  const overview = useQuery({ ...trpc.admin.overview.queryOptions(), refetchInterval: connected ? false : POLL_MS });
  if (overview.isPending) return <Loading label="Loading the market…" />;
  if (overview.isError) return <Alert tone="error" title="The market overview could not be loaded">{describeError(overview.error)}</Alert>;
  const { machines, jobs } = overview.data;
  return (
    <div className="space-y-6">
      <PulseStats />
      <p className="text-sm">
        <Link href="/admin/decisions" className="font-medium text-indigo-600 hover:underline">
          The decision log
        </Link>
        <span className="text-slate-500">: every admission, delay, rejection, placement, move and departure, with its reasons.</span>
      </p>
      <ManagersTable machines={machines} />
      <HistoryCharts />
      <Books books={overview.data.books} />
      <GrantCredits />
      <MachinesTable machines={machines} />
      <JobsTable jobs={jobs} />
      <SettingsPanel />
      <p className="text-xs text-slate-400" aria-live="off" data-testid="admin-live" data-live={connected}>
        {connected ? "Live: the market sends each change as it happens" : "Reconnecting to the market; refreshed every 2 seconds meanwhile"} · last at{" "}
        {dateTime(overview.dataUpdatedAt)} · {number(overview.data.streams, 0)} live connection{overview.data.streams === 1 ? "" : "s"}
      </p>
    </div>
  );
}

/** The market's Market Managers (docs/SCALING.md "Several managers"): shown when there are several. */
function ManagersTable({ machines }: { machines: Overview["machines"] }) {
  const trpc = useTRPC();
  const managers = useQuery({ ...trpc.admin.managers.queryOptions(), refetchInterval: 2000 });
  if (!managers.data || managers.data.managers.length < 2) return null;
  const { self, timeoutMs } = managers.data;
  return (
    <Card title="Market Managers">
      <p className="mb-3 text-xs text-slate-500">
        Each holds its own machines and jobs; one silent for {number((timeoutMs ?? 0) / 1000, 0)} s is taken over by another. This page is served by {self}.
      </p>
      <table className="w-full text-left text-sm" data-testid="admin-managers" aria-label="Market Managers">
        <thead className="text-xs text-slate-500">
          <tr>
            <th className="py-1">Manager</th>
            <th>Health</th>
            <th className="text-right">Machines</th>
            <th className="text-right">Jobs</th>
            <th className="text-right">Tasks/s</th>
            <th>Last heard</th>
          </tr>
        </thead>
        <tbody>
          {managers.data.managers.map((m) => (
            <tr key={m.id} className="border-t border-slate-100">
              <td className="py-1 font-medium">
                {m.id} <span className="text-xs text-slate-400">{m.url}</span>
              </td>
              <td>{m.alive ? <Badge value="alive" /> : <Badge value={m.claimedBy ? `taken over by ${m.claimedBy}` : "silent"} />}</td>
              <td className="text-right">{number(m.machines, 0)}</td>
              <td className="text-right">{number(m.jobs, 0)}</td>
              <td className="text-right">{number(m.tasksPerSecond, 1)}</td>
              <td>{relative(m.heartbeatAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <MoveMachines managers={managers.data.managers.filter((m) => m.alive).map((m) => m.id)} machines={machines} />
      <DrainingMachines machines={machines} />
    </Card>
  );
}

/** Machines moved while busy, waiting for their running tasks to end before they go (admin.cancelDrains). */
function DrainingMachines({ machines }: { machines: Overview["machines"] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const cancel = useMutation(
    trpc.admin.cancelDrains.mutationOptions({
      onSettled: () => void queryClient.invalidateQueries({ queryKey: trpc.admin.overview.queryKey() }),
    }),
  );
  const draining = machines.filter((m) => m.status === "active" && m.drainingTo);
  const refused = cancel.data?.cancels.flatMap((c) => (c.cancelled ? [] : [c])) ?? [];
  if (!draining.length && !cancel.data) return null;
  return (
    <section className="mt-4 border-t border-slate-100 pt-3 text-sm" aria-labelledby="draining-heading">
      <h3 id="draining-heading" className="text-xs font-medium text-slate-600">
        Draining: moved while busy, they take no new work and go once their running tasks end
      </h3>
      {draining.length ? (
        <ul className="mt-1 space-y-1" aria-label="Draining machines">
          {draining.map((m) => (
            <li key={m.id} className="flex flex-wrap items-center gap-2">
              <bdi className="font-medium">{m.name}</bdi>
              <span className="font-mono text-xs text-slate-500">{shortId(m.id)}</span>
              <span>
                {m.manager} → {m.drainingTo}
                {m.drainingSince ? <span className="text-xs text-slate-500"> since {relative(m.drainingSince)}</span> : null}
              </span>
              <Button variant="secondary" className="px-2 py-0.5 text-xs" busy={cancel.isPending} onClick={() => cancel.mutate({ machineIds: [m.id] })} aria-label={`Cancel move of ${m.name}`}>
                Cancel move
              </Button>
            </li>
          ))}
        </ul>
      ) : null}
      {cancel.isError ? <Alert tone="error" title="The move could not be cancelled">{describeError(cancel.error)}</Alert> : null}
      {refused.length ? (
        <ul className="mt-1 list-disc pl-5 text-xs text-slate-600" role="status">
          {refused.map((r) => (
            <li key={r.machineId}>{describeAnyReason(r.reason)}</li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

/**
 * Moves machines from one live manager to another (admin.moveMachines): the first `count` active
 * opportunistic machines the source holds, the idle ones first (they move at once; busy ones drain
 * first); each refused one says why.
 */
function MoveMachines({ managers, machines }: { managers: string[]; machines: Overview["machines"] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [count, setCount] = useState(1);
  const source = from || managers[0] || "";
  const target = to || managers.find((m) => m !== source) || "";
  const candidates = machines
    .filter((m) => m.status === "active" && m.kind === "opportunistic" && m.manager === source)
    .sort((a, b) => a.running + a.queued - (b.running + b.queued));
  const move = useMutation(
    trpc.admin.moveMachines.mutationOptions({
      onSettled: () => {
        void queryClient.invalidateQueries({ queryKey: trpc.admin.managers.queryKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.admin.overview.queryKey() });
      },
    }),
  );
  if (managers.length < 2) return null;
  const moved = move.data?.moves.filter((m) => m.state === "moved").length ?? 0;
  const draining = move.data?.moves.filter((m) => m.state === "draining").length ?? 0;
  const refused = move.data?.moves.flatMap((m) => (m.state === "refused" ? [m] : [])) ?? [];
  const select = "rounded-md border border-slate-300 px-2 py-1 text-sm";
  return (
    <form
      className="mt-4 flex flex-wrap items-end gap-2 border-t border-slate-100 pt-3 text-sm"
      aria-label="Move machines between managers"
      onSubmit={(e) => {
        e.preventDefault();
        const machineIds = candidates.slice(0, count).map((m) => m.id);
        if (machineIds.length) move.mutate({ machineIds, toManager: target });
      }}
    >
      <label className="flex flex-col text-xs text-slate-600">
        Machines
        <input type="number" min={1} max={500} value={count} onChange={(e) => setCount(Math.max(1, Math.min(500, Number(e.target.value) || 1)))} className={cx(select, "w-20")} aria-label="How many machines to move" />
      </label>
      <label className="flex flex-col text-xs text-slate-600">
        From
        <select value={source} onChange={(e) => setFrom(e.target.value)} className={select} aria-label="Move from manager">
          {managers.map((m) => (
            <option key={m}>{m}</option>
          ))}
        </select>
      </label>
      <label className="flex flex-col text-xs text-slate-600">
        To
        <select value={target} onChange={(e) => setTo(e.target.value)} className={select} aria-label="Move to manager">
          {managers
            .filter((m) => m !== source)
            .map((m) => (
              <option key={m}>{m}</option>
            ))}
        </select>
      </label>
      <Button type="submit" disabled={move.isPending || !candidates.length || !target}>
        Move machines
      </Button>
      <span className="text-xs text-slate-500">{candidates.length ? `${source} holds ${candidates.length} opportunistic machine${candidates.length === 1 ? "" : "s"}.` : `${source} holds no opportunistic machine.`}</span>
      {move.isError ? <Alert tone="error" title="The machines could not be moved">{describeError(move.error)}</Alert> : null}
      {move.data ? (
        <div className="w-full text-xs" role="status" data-testid="moved-machines">
          {moved || !draining ? `Moved ${moved} machine${moved === 1 ? "" : "s"} to ${move.data.toManager}; their workers follow. ` : null}
          {draining
            ? `${draining} busy machine${draining === 1 ? " is" : "s are"} draining toward ${move.data.toManager}: no new work, and ${draining === 1 ? "it moves once its" : "they move once their"} running tasks end.`
            : null}
          {refused.length ? (
            <ul className="mt-1 list-disc pl-5 text-slate-600">
              {refused.map((r) => (
                <li key={r.machineId}>{describeAnyReason(r.reason)}</li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}

/** The market's own account and the double-entry check (docs/DESIGN.md "Settlement"). */
function Books({ books }: { books: Overview["books"] }) {
  return (
    <Card
      title="Books"
      actions={
        <span
          data-testid="ledger-balanced"
          data-balanced={books.balanced}
          className={cx(
            "inline-flex items-center gap-1.5 rounded-full px-2.5 py-0.5 text-xs font-medium",
            books.balanced ? "bg-emerald-100 text-emerald-800" : "bg-rose-100 text-rose-800",
          )}
        >
          <span aria-hidden="true">{books.balanced ? "✓" : "✗"}</span>
          {books.balanced ? "Ledger balanced" : "Ledger out of balance"}
        </span>
      }
    >
      <dl className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-4">
        <Stat label="Market profit" value={<Signed value={books.profit} />} testId="market-profit" />
        <Stat label="In escrow" value={credits(books.inEscrow)} testId="in-escrow" />
        <Stat label="Paid to producers" value={credits(books.paidToProducers)} testId="paid-to-producers" />
        <Stat label="Credits given" value={credits(books.granted)} testId="starting-credits" />
      </dl>
      <p className="mt-3 text-xs text-slate-500">
        Profit is what consumers were charged less producer payments and contracts; the market&apos;s own account also carries the credits it gave
        away, {credits(books.startingCredits)} as starting credits and {credits(books.adminGranted)} granted by admins ({credits(books.marketBalance)} in
        all).{" "}
        {books.balanced
          ? "Every entry balances: the users', the market's and the running jobs' accounts sum to zero."
          : "The users', the market's and the running jobs' accounts do not sum to zero: an entry is out of balance, or credits were left in an ended job's escrow."}
      </p>
    </Card>
  );
}

function Signed({ value }: { value: number }) {
  return <span className={value < 0 ? "text-rose-700" : value > 0 ? "text-emerald-700" : undefined}>{credits(value)}</span>;
}

/** An owner's standing (market/standing.ts) in a few words: what verification counts its results as. */
function standingText(s: { has: boolean; forged: boolean; spotCheck: number; net: number; score: number }): string {
  if (s.forged) return "caught forging";
  if (!s.has) return `none yet (${Math.round(s.score * 100)}%)`;
  return s.spotCheck > 0 ? `yes, ${Math.round(s.spotCheck * 100)}% checked` : "yes, trusted";
}

function standingTone(s: { has: boolean; forged: boolean }): string {
  return s.forged ? "text-rose-700" : s.has ? "text-emerald-700" : "text-amber-700";
}

/** Machines shown at once; a market of thousands pages through them. */
const MACHINES_PER_PAGE = 50;

/** The market's figures of the moment, sent by the market every second (live.pulse). */
function PulseStats() {
  const trpc = useTRPC();
  const pulse = useSubscription(trpc.live.pulse.subscriptionOptions()).data;
  const v = (n: number | undefined) => (pulse ? number(n, 0) : "…");
  return (
    <dl className="grid grid-cols-2 gap-3 md:grid-cols-6" data-testid="admin-pulse" data-updated={pulse?.at ?? ""}>
      <Stat label="Machines in the market" value={v(pulse?.machines)} testId="admin-active-machines" />
      <Stat label="Slots" value={v(pulse?.slots)} />
      <Stat label="Tasks running" value={v(pulse?.running)} />
      <Stat label="Tasks queued" value={v(pulse?.queued)} />
      <Stat label="Utilisation" value={pulse ? `${number(pulse.utilisation * 100, 0)}%` : "…"} />
      <Stat label="Jobs in progress" value={v(pulse?.jobs)} />
    </dl>
  );
}

function MachinesTable({ machines: all }: { machines: Overview["machines"] }) {
  const trpc = useTRPC();
  // With several Market Managers, which one holds each machine (and where a draining one goes).
  const several = (useQuery({ ...trpc.admin.managers.queryOptions(), refetchInterval: 2000 }).data?.managers.length ?? 0) > 1;
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(all.length / MACHINES_PER_PAGE));
  const at = Math.min(page, pages - 1);
  const machines = all.slice(at * MACHINES_PER_PAGE, (at + 1) * MACHINES_PER_PAGE);
  return (
    <Card
      title="Machines"
      actions={
        pages > 1 ? (
          <nav aria-label="Machine pages" className="flex items-center gap-2 text-xs text-slate-600">
            <Button variant="secondary" disabled={at === 0} onClick={() => setPage(at - 1)}>
              Previous
            </Button>
            <span data-testid="machine-page">
              {at * MACHINES_PER_PAGE + 1}–{Math.min(all.length, (at + 1) * MACHINES_PER_PAGE)} of {all.length}
            </span>
            <Button variant="secondary" disabled={at >= pages - 1} onClick={() => setPage(at + 1)}>
              Next
            </Button>
          </nav>
        ) : null
      }
    >
      {all.length === 0 ? (
        <EmptyState title="No machines yet">Open the Produce page in a browser, or start a Node worker with an API token.</EmptyState>
      ) : (
        // Scrolls sideways on a narrow screen: focusable, so it scrolls from the keyboard too.
        <div className="overflow-x-auto" tabIndex={0} role="region" aria-label="Machines, scrolling sideways">
        <table className="min-w-full text-sm" aria-label="Machines">
          <thead className="text-left text-xs uppercase tracking-wide text-slate-500">
            <tr>
              <th scope="col" className="py-2 pr-4">Machine</th>
              <th scope="col" className="py-2 pr-4">Kind</th>
              <th scope="col" className="py-2 pr-4">Status</th>
              {several ? <th scope="col" className="py-2 pr-4">Manager</th> : null}
              <th scope="col" className="py-2 pr-4 text-right">Slots</th>
              <th scope="col" className="py-2 pr-4 text-right">Speed</th>
              <th scope="col" className="py-2 pr-4 text-right">Price / s</th>
              <th scope="col" className="py-2 pr-4 text-right">Owner's standing</th>
              <th scope="col" className="py-2 pr-4 text-right">Queue</th>
              <th scope="col" className="py-2 pr-4 text-right">Running</th>
              <th scope="col" className="py-2">Last heartbeat</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {machines.map((m) => (
              <tr key={m.id} className={m.status === "departed" ? "text-slate-400" : undefined}>
                <td className="py-2 pr-4">
                  <bdi className="block font-medium text-slate-900">{m.name}</bdi>
                  <span className="block text-xs text-slate-500">
                    {m.owner} · <span className="font-mono">{shortId(m.id)}</span>
                  </span>
                  {m.alsoOfferedTo.length ? (
                    <span className="block text-xs text-slate-500" data-testid="machine-also-offered">
                      {m.manager ? `held by ${m.manager}, ` : ""}also offered to {m.alsoOfferedTo.join(", ")}
                    </span>
                  ) : null}
                </td>
                <td className="py-2 pr-4">
                  <Badge value={m.kind} />
                </td>
                <td className="py-2 pr-4">
                  <Badge value={m.status} />
                </td>
                {several ? (
                  <td className="py-2 pr-4" data-testid="machine-manager">
                    {m.manager ?? "none"}
                    {m.drainingTo && m.status === "active" ? <span className="block text-xs text-amber-700">draining to {m.drainingTo}</span> : null}
                  </td>
                ) : null}
                <td className="py-2 pr-4 text-right tabular-nums">{m.slots}</td>
                <td className="py-2 pr-4 text-right tabular-nums">{number(m.speed, 2)}×</td>
                <td className="py-2 pr-4 text-right tabular-nums">{credits(m.pricePerSecond)}</td>
                <td data-testid="machine-standing" className={cx("py-2 pr-4 text-right tabular-nums", m.status === "departed" ? undefined : standingTone(m.standing))}>{standingText(m.standing)}</td>
                <td className="py-2 pr-4 text-right tabular-nums">{m.queued}</td>
                <td className="py-2 pr-4 text-right tabular-nums">{m.running}</td>
                <td className="py-2 text-slate-600">{m.status === "departed" ? `left ${relative(m.departedAt)}` : relative(m.lastHeartbeatAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
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
                    <bdi>{j.name}</bdi>
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
      <PageHeader title="Market admin" description="The market's books, every machine and job, live; and the settings the market runs on." />
      <RequireRole role="admin" what="watch the market">
        {() => <Dashboard />}
      </RequireRole>
    </>
  );
}

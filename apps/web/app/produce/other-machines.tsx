"use client";
// The producer's machines in the market (Node workers, other tabs): what each offers now, and
// its controls, which the market applies at once and the machine's worker hears at its next
// heartbeat.
import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { MachineControlsChange } from "@cyclemarket/worker-runtime/browser";
import { useTRPC, type RouterOutputs } from "@/lib/trpc";
import { describeError } from "@/lib/reasons";
import { number, relative } from "@/lib/format";
import { Badge, Button, Card } from "@/components/ui";
import { WorkerInstall } from "@/components/install-commands";
import { ControlsForm } from "./controls-form";
import { shortId } from "@cyclemarket/client/job-file";

type Machine = RouterOutputs["machines"]["list"][number];

const REFRESH_MS = 5_000;

function state(m: Machine): string {
  if (m.controls.paused) return "paused";
  if (!m.localAvailable) return m.controls.onlyIdle ? "in use" : "off schedule";
  return "producing";
}

export function OtherMachines({ thisMachineId }: { thisMachineId: string | null }) {
  const trpc = useTRPC();
  const machines = useQuery({ ...trpc.machines.list.queryOptions(), refetchInterval: REFRESH_MS });
  const others = (machines.data ?? []).filter((m) => m.id !== thisMachineId);
  return (
    <Card title="Your other machines">
      {others.length === 0 ? (
        <p className="text-sm text-slate-500">
          {machines.data ? "None in the market now. A Node worker started with your API token (below) appears here, and you can pause it or limit it from here." : "…"}
        </p>
      ) : (
        <ul className="divide-y divide-slate-100" aria-label="Your other machines">
          {others.map((m) => (
            <MachineRow key={m.id} machine={m} />
          ))}
        </ul>
      )}
      <div className="mt-4 border-t border-slate-100 pt-4">
        <WorkerInstall />
      </div>
    </Card>
  );
}

function MachineRow({ machine: m }: { machine: Machine }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const set = useMutation(
    trpc.machines.setControls.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.machines.list.queryKey() }),
    }),
  );
  const apply = (controls: MachineControlsChange) => set.mutate({ machineId: m.id, controls });
  return (
    <li className="py-3 text-sm" data-testid="other-machine">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <span>
          <span className="font-medium text-slate-900">{m.name}</span>{" "}
          <span className="font-mono text-xs text-slate-500">{shortId(m.id)}</span>
          <span className="block text-xs text-slate-500">
            {m.slots} slot{m.slots === 1 ? "" : "s"} at {number(m.speed, 2)}×{m.controls.cpuLimit < 100 ? `, CPU limit ${m.controls.cpuLimit}%` : ""}
            {m.controls.schedule ? `, schedule "${m.controls.schedule}"` : ""} · {m.running} running, {m.queued} queued · heard {relative(m.lastHeartbeatAt)}
          </span>
        </span>
        <span className="flex items-center gap-2">
          <Badge value={state(m)} />
          {m.controls.paused ? (
            <Button variant="secondary" busy={set.isPending} onClick={() => apply({ paused: false })}>
              Resume
            </Button>
          ) : (
            <Button variant="secondary" busy={set.isPending} onClick={() => apply({ paused: true })}>
              Pause
            </Button>
          )}
          <Button variant="ghost" onClick={() => setEditing((e) => !e)} aria-expanded={editing}>
            Controls
          </Button>
        </span>
      </div>
      {editing ? (
        <div className="mt-3 max-w-sm">
          <ControlsForm controls={m.controls} where={m.kind === "dedicated" || !m.name.endsWith(" tab") ? "node" : "browser"} onApply={apply} busy={set.isPending} error={set.error ? describeError(set.error) : null} />
        </div>
      ) : set.error ? (
        <p className="mt-2 text-xs text-rose-700">{describeError(set.error)}</p>
      ) : null}
    </li>
  );
}

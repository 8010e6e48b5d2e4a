"use client";
// The producer's controls for one machine (this tab, or one of their Node workers): hand-back
// choice, CPU limit, only while idle, weekly schedule, memory cap per task. Pause and resume are
// buttons beside the machine's status, not part of this form.
import { useEffect, useState } from "react";
import { MachineControlsPatch, type MachineControls, type MachineControlsChange } from "@cyclemarket/worker-runtime/browser";
import { Alert, Button, Field, inputClass } from "@/components/ui";

interface Draft {
  handBack: "finish" | "now";
  cpuLimit: string;
  onlyIdle: boolean;
  idleLoad: string;
  schedule: string;
  maxTaskMemoryMb: string;
}

const toDraft = (c: MachineControls): Draft => ({
  handBack: c.handBack,
  cpuLimit: String(c.cpuLimit),
  onlyIdle: c.onlyIdle,
  idleLoad: String(Math.round(c.idleLoad * 100)),
  schedule: c.schedule ?? "",
  maxTaskMemoryMb: c.maxTaskMemoryMb === null ? "" : String(c.maxTaskMemoryMb),
});

/** The draft as a change to the controls, or the schema's words for what is wrong. */
export function parseDraft(d: Draft): { ok: true; change: MachineControlsChange } | { ok: false; message: string } {
  const number = (text: string) => (text.trim() === "" ? null : Number(text));
  const idle = number(d.idleLoad);
  const parsed = MachineControlsPatch.safeParse({
    handBack: d.handBack,
    cpuLimit: number(d.cpuLimit) ?? 100,
    onlyIdle: d.onlyIdle,
    idleLoad: idle === null ? 0.3 : idle / 100,
    schedule: d.schedule.trim() === "" ? null : d.schedule.trim(),
    maxTaskMemoryMb: number(d.maxTaskMemoryMb),
  });
  return parsed.success ? { ok: true, change: parsed.data } : { ok: false, message: parsed.error.issues.map((i) => i.message).join(" ") };
}

export function ControlsForm({
  controls,
  where,
  onApply,
  busy = false,
  error = null,
  applyLabel = "Apply",
  idleHint,
  testId,
}: {
  controls: MachineControls;
  /** "browser": idle means this tab hidden or the user idle; "node": the server's other load. */
  where: "browser" | "node";
  onApply: (change: MachineControlsChange) => void;
  busy?: boolean;
  error?: string | null;
  applyLabel?: string;
  idleHint?: string;
  testId?: string;
}) {
  const [draft, setDraft] = useState<Draft>(() => toDraft(controls));
  const [problem, setProblem] = useState<string | null>(null);
  const key = JSON.stringify(controls);
  // The market's record changed (applied here, or elsewhere): show it.
  useEffect(() => setDraft(toDraft(JSON.parse(key) as MachineControls)), [key]);
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setDraft((d) => ({ ...d, [k]: v }));

  function apply(e: React.FormEvent) {
    e.preventDefault();
    const parsed = parseDraft(draft);
    if (!parsed.ok) return setProblem(parsed.message);
    setProblem(null);
    onApply(parsed.change);
  }

  return (
    <form className="space-y-3" onSubmit={apply} data-testid={testId} noValidate>
      <Field label="CPU limit (% of each core)" hint="Each core works this share of the time: a task rests every tenth of a second while it runs (or after it, in a browser that cannot pause it).">
        {(p) => <input {...p} type="number" min={1} max={100} step={1} value={draft.cpuLimit} onChange={(e) => set("cpuLimit", e.target.value)} className={inputClass} />}
      </Field>
      <label className="flex items-start gap-2 text-sm text-slate-700">
        <input type="checkbox" className="mt-1" checked={draft.onlyIdle} onChange={(e) => set("onlyIdle", e.target.checked)} />
        <span>
          Only while I am not using this computer
          <span className="block text-xs text-slate-500">
            {idleHint ?? (where === "browser" ? "While this tab is hidden, or you have been idle for a minute where the browser allows it to tell." : "While the rest of the machine keeps its cores below the load below.")}
          </span>
        </span>
      </label>
      {where === "node" && draft.onlyIdle ? (
        <Field label="In use above (% of all cores)">
          {(p) => <input {...p} type="number" min={0} max={100} step={1} value={draft.idleLoad} onChange={(e) => set("idleLoad", e.target.value)} className={inputClass} />}
        </Field>
      ) : null}
      <Field label="Weekly schedule" hint='Local time, e.g. "Mon-Fri 18:00-08:00; Sat,Sun 00:00-24:00". Empty: any time.'>
        {(p) => <input {...p} type="text" value={draft.schedule} placeholder="any time" onChange={(e) => set("schedule", e.target.value)} className={inputClass} />}
      </Field>
      <Field label="Most memory per task (MB)" hint="Empty: what the machine offers per core.">
        {(p) => <input {...p} type="number" min={16} step={1} value={draft.maxTaskMemoryMb} placeholder="no cap" onChange={(e) => set("maxTaskMemoryMb", e.target.value)} className={inputClass} />}
      </Field>
      <Field label="When paused or switched off">
        {(p) => (
          <select {...p} value={draft.handBack} onChange={(e) => set("handBack", e.target.value as Draft["handBack"])} className={inputClass}>
            <option value="finish">let leased tasks finish</option>
            <option value="now">hand leased tasks back at once</option>
          </select>
        )}
      </Field>
      {problem || error ? <Alert tone="error">{problem ?? error}</Alert> : null}
      <Button type="submit" variant="secondary" busy={busy} className="w-full">
        {applyLabel}
      </Button>
    </form>
  );
}

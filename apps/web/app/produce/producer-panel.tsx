"use client";
import { useEffect, useReducer, useRef, useState } from "react";
import {
  DEFAULT_CONTROLS,
  MachineControls,
  createBrowserPool,
  defaultSlots,
  runProducer,
  type MachineControlsChange,
  type OffReason,
  type ProducerEvent,
} from "@cyclemarket/worker-runtime/browser";
import { useTRPCClient } from "@/lib/trpc";
import { createProducerApi, departOnUnload } from "@/lib/producer-api";
import { credits, number, seconds, time } from "@/lib/format";
import { describeAnyReason, sandboxWords } from "@/lib/reasons";
import { isOutage } from "@/lib/outage";
import { createBrowserActivity, hasIdleDetection } from "@/lib/browser-idle";
import { awayFor } from "@/components/connection-banner";
import { Alert, Badge, Button, Card, Field, ProgressBar, Stat, cx, inputClass } from "@/components/ui";
import { EarningsCard, useEarnings, useReadAfterPayments } from "./earnings-card";
import { StandingCard } from "./standing-card";
import { GoingRate } from "./going-rate";
import { ControlsForm } from "./controls-form";
import { OtherMachines } from "./other-machines";
import { shortId } from "@cyclemarket/client/job-file";

type Phase = "idle" | "benchmarking" | "registering" | "producing" | "stopping" | "stopped" | "failed";

interface TaskLine {
  leaseId: string;
  taskId: string;
  jobId: string;
  startedAt: number | null;
}

interface Finished {
  leaseId: string;
  taskId: string;
  jobId: string;
  at: number;
  elapsedMs: number;
  outcome: "accepted" | "refused" | "failed" | "abandoned" | "finished";
  detail: string | null;
}

interface State {
  phase: Phase;
  machineId: string | null;
  speed: number | null;
  slots: number;
  price: number;
  running: Record<string, TaskLine>;
  leased: number;
  done: number;
  accepted: number;
  refused: number;
  abandoned: number;
  earned: number;
  recent: Finished[];
  lastError: string | null;
  idle: boolean;
  /** The work stream: the market tells this tab when it has work, so it need not keep asking. */
  stream: "live" | "reconnecting" | "closed" | null;
  elapsed: Record<string, number>;
  /** Since when the market has not answered this tab's calls (ms), or null. */
  marketAwaySince: number | null;
  /** Whether this tab offers its capacity now, and why not; with the controls in force. */
  offReason: OffReason | null;
  controls: MachineControls;
}

type Action =
  | { type: "start"; slots: number; price: number; controls: MachineControls }
  | { type: "benchmarked"; speed: number }
  | { type: "event"; event: ProducerEvent }
  | { type: "stopping" }
  | { type: "stopped" }
  | { type: "failed"; message: string };

const INITIAL: State = {
  phase: "idle",
  machineId: null,
  speed: null,
  slots: 1,
  price: 1,
  running: {},
  leased: 0,
  done: 0,
  accepted: 0,
  refused: 0,
  abandoned: 0,
  earned: 0,
  recent: [],
  lastError: null,
  idle: false,
  stream: null,
  elapsed: {},
  marketAwaySince: null,
  offReason: null,
  controls: DEFAULT_CONTROLS,
};

const RECENT = 12;

function push(recent: Finished[], item: Finished): Finished[] {
  return [item, ...recent.filter((r) => r.leaseId !== item.leaseId)].slice(0, RECENT);
}

function withoutKey<T>(record: Record<string, T>, key: string): Record<string, T> {
  const { [key]: _, ...rest } = record;
  return rest;
}

function reduce(state: State, action: Action): State {
  switch (action.type) {
    case "start":
      return { ...INITIAL, phase: "benchmarking", slots: action.slots, price: action.price, controls: action.controls };
    case "benchmarked":
      return { ...state, phase: "registering", speed: action.speed };
    case "stopping":
      return { ...state, phase: "stopping" };
    case "stopped":
      return { ...state, phase: state.phase === "failed" ? "failed" : "stopped", running: {} };
    case "failed":
      return { ...state, phase: "failed", lastError: action.message, running: {} };
    case "event":
      return onEvent(state, action.event);
  }
}

function onEvent(state: State, e: ProducerEvent): State {
  switch (e.type) {
    case "registered":
      return { ...state, phase: state.phase === "registering" ? "producing" : state.phase, machineId: e.machineId, lastError: null };
    case "leased": {
      const running = { ...state.running };
      for (const l of e.leases) running[l.leaseId] = { ...l, startedAt: null };
      return { ...state, running, leased: state.leased + e.leases.length, idle: false };
    }
    case "started":
      return { ...state, running: { ...state.running, [e.leaseId]: { leaseId: e.leaseId, taskId: e.taskId, jobId: e.jobId, startedAt: Date.now() } }, idle: false };
    case "finished":
      return {
        ...state,
        done: state.done + 1,
        running: withoutKey(state.running, e.leaseId),
        elapsed: { ...state.elapsed, [e.leaseId]: e.elapsedMs },
        recent: push(state.recent, {
          leaseId: e.leaseId,
          taskId: e.taskId,
          jobId: e.jobId,
          at: Date.now(),
          elapsedMs: e.elapsedMs,
          outcome: e.error ? "failed" : "finished",
          detail: e.error ? sandboxWords(e.error.code) : e.restedMs ? `rested ${seconds(e.restedMs / 1000)} of it for the CPU limit` : null,
        }),
      };
    case "reported": {
      const elapsedMs = state.elapsed[e.leaseId] ?? 0;
      const prior = state.recent.find((r) => r.leaseId === e.leaseId);
      const item: Finished = {
        leaseId: e.leaseId,
        taskId: e.taskId,
        jobId: prior?.jobId ?? "",
        at: Date.now(),
        elapsedMs,
        outcome: e.accepted ? "accepted" : prior?.outcome === "failed" ? "failed" : "refused",
        detail: e.reason ? describeAnyReason(e.reason) : (prior?.detail ?? null),
      };
      return {
        ...state,
        accepted: state.accepted + (e.accepted ? 1 : 0),
        // A result the market took means whatever went wrong before has passed.
        lastError: e.accepted ? null : state.lastError,
        refused: state.refused + (e.accepted ? 0 : 1),
        // Opportunistic machines are paid per second of successful use (docs/DESIGN.md, "Machines").
        earned: state.earned + (e.accepted ? (elapsedMs / 1000) * state.price : 0),
        elapsed: withoutKey(state.elapsed, e.leaseId),
        recent: push(state.recent, item),
      };
    }
    case "abandoned":
      return {
        ...state,
        abandoned: state.abandoned + 1,
        running: withoutKey(state.running, e.leaseId),
        recent: push(state.recent, {
          leaseId: e.leaseId,
          taskId: e.taskId,
          jobId: state.running[e.leaseId]?.jobId ?? "",
          at: Date.now(),
          elapsedMs: 0,
          outcome: "abandoned",
          detail:
            e.reason === "expired"
              ? "The lease expired; the market gave the task to another machine."
              : e.reason === "handed-back"
                ? "Handed back to the market when this tab paused or switched off."
                : "Given back to the market when production stopped.",
        }),
      };
    case "idle":
      return { ...state, idle: true };
    case "stream":
      return { ...state, stream: e.state };
    case "market":
      return { ...state, marketAwaySince: e.reachable ? null : (state.marketAwaySince ?? Date.now()) };
    case "capacity":
      return { ...state, offReason: e.reason, controls: e.controls };
    case "error":
      // A call that got no answer is the market being away, said by the status line; never the library's words.
      return isOutage(e.message) || state.marketAwaySince !== null ? state : { ...state, lastError: `${STAGE_WORDS[e.stage]}: ${e.message}` };
    case "departed":
      return { ...state, running: {} };
  }
}

const BENCHMARK_MS = 1000;

const STAGE_WORDS: Record<string, string> = {
  register: "Joining the market",
  lease: "Asking for tasks",
  module: "Fetching a task's program",
  heartbeat: "Keeping in touch with the market",
  report: "Delivering a result",
  depart: "Leaving the market",
  stream: "Listening for work",
  offer: "Telling the market this tab's capacity",
};

/** This browser's choices for its own tab, kept between visits (the market keeps them per machine too). */
const CONTROLS_KEY = "cyclemarket.produce.controls";
function savedControls(): MachineControls {
  try {
    return MachineControls.parse(JSON.parse(localStorage.getItem(CONTROLS_KEY) ?? "{}"));
  } catch {
    return DEFAULT_CONTROLS;
  }
}

function machineName(): string {
  const ua = navigator.userAgent;
  const browser = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox" : /Chrom(e|ium)\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "Browser";
  const os = /Windows/.test(ua) ? "Windows" : /Mac OS X/.test(ua) ? "macOS" : /Android/.test(ua) ? "Android" : /Linux/.test(ua) ? "Linux" : /iPhone|iPad/.test(ua) ? "iOS" : "";
  return `${browser}${os ? ` on ${os}` : ""} tab`;
}

/** A rough figure for the machine profile: the browser's own estimate of its downlink, if it has one. */
function bandwidth(): number {
  const downlink = (navigator as Navigator & { connection?: { downlink?: number } }).connection?.downlink;
  return downlink && downlink > 0 ? Math.round((downlink * 1_000_000) / 8) : 1_250_000;
}

export function ProducerPanel() {
  const client = useTRPCClient();
  const [cores, setCores] = useState("1");
  const [maxCores, setMaxCores] = useState(1);
  const [price, setPrice] = useState("1");
  const [formError, setFormError] = useState<string | null>(null);
  const [state, dispatch] = useReducer(reduce, INITIAL);
  const [benchStart, setBenchStart] = useState<number | null>(null);
  const [, tick] = useState(0);
  const controller = useRef<AbortController | null>(null);
  const machineId = useRef<string | null>(null);
  const [controls, setControls] = useState<MachineControls>(DEFAULT_CONTROLS);
  /** Sends changes made while producing to the running loop, which tells the market. */
  const changes = useRef<((change: MachineControlsChange) => void) | null>(null);
  const activity = useRef<ReturnType<typeof createBrowserActivity> | null>(null);

  useEffect(() => setControls(savedControls()), []);

  function changeControls(change: MachineControlsChange) {
    const next = MachineControls.parse({ ...controls, ...change });
    setControls(next);
    localStorage.setItem(CONTROLS_KEY, JSON.stringify({ ...next, paused: false }));
    // Idle Detection needs the person's click to be granted: ask now, when they turned it on.
    if (next.onlyIdle && hasIdleDetection()) void activity.current?.detectIdle();
    changes.current?.(change);
  }

  useEffect(() => {
    setCores(String(defaultSlots()));
    setMaxCores(Math.max(1, navigator.hardwareConcurrency || 1));
  }, []);

  // Keep durations and the benchmark bar moving.
  useEffect(() => {
    if (state.phase === "idle" || state.phase === "stopped" || state.phase === "failed") return;
    const timer = setInterval(() => tick((n) => n + 1), 250);
    return () => clearInterval(timer);
  }, [state.phase]);

  // Closing the tab returns its unfinished tasks to the market; leaving the page stops production.
  useEffect(() => {
    const onPageHide = () => {
      if (machineId.current) departOnUnload(machineId.current);
      machineId.current = null;
      controller.current?.abort();
    };
    window.addEventListener("pagehide", onPageHide);
    return () => {
      window.removeEventListener("pagehide", onPageHide);
      controller.current?.abort();
    };
  }, []);

  const active = state.phase === "benchmarking" || state.phase === "registering" || state.phase === "producing" || state.phase === "stopping";

  async function start() {
    const slots = Number(cores);
    const pricePerSecond = Number(price);
    if (!Number.isInteger(slots) || slots < 1 || slots > 256) return setFormError("Cores: a whole number of at least 1.");
    if (!Number.isFinite(pricePerSecond) || pricePerSecond < 0) return setFormError("Price: a number of credits, 0 or more.");
    setFormError(null);
    const abort = new AbortController();
    controller.current = abort;
    dispatch({ type: "start", slots, price: pricePerSecond, controls });
    const ownerActivity = createBrowserActivity();
    activity.current = ownerActivity;
    if (controls.onlyIdle && hasIdleDetection()) void ownerActivity.detectIdle();
    setBenchStart(Date.now());
    const pool = createBrowserPool({ slots });
    try {
      const bench = await pool.benchmark(BENCHMARK_MS);
      if (abort.signal.aborted) {
        dispatch({ type: "stopped" });
        return;
      }
      dispatch({ type: "benchmarked", speed: bench.speed });
      const memory = (navigator as Navigator & { deviceMemory?: number }).deviceMemory;
      await runProducer({
        api: createProducerApi(client),
        executor: pool,
        slots,
        signal: abort.signal,
        registerAttempts: 3,
        controls,
        ownerActivity,
        controlChanges: (listener) => {
          changes.current = listener;
          return () => {
            if (changes.current === listener) changes.current = null;
          };
        },
        // A tab that is hidden or idle may turn on at once.
        conditionsEveryMs: 500,
        machine: {
          name: machineName(),
          kind: "opportunistic",
          speed: bench.speed,
          // Per Web Worker; the sandbox caps each task's own memory.
          memoryPerSlotMb: Math.max(64, Math.min(1024, Math.floor(((memory ?? 4) * 1024) / 4 / slots))),
          bandwidthBytesPerSecond: bandwidth(),
          pricePerSecond,
          userAgent: navigator.userAgent,
        },
        onEvent: (event) => {
          if (event.type === "registered") machineId.current = event.machineId;
          if (event.type === "departed") machineId.current = null;
          dispatch({ type: "event", event });
        },
      });
      dispatch({ type: "stopped" });
    } catch (e) {
      dispatch({ type: "failed", message: e instanceof Error ? e.message : String(e) });
    } finally {
      machineId.current = null;
      await pool.close();
      if (controller.current === abort) controller.current = null;
    }
  }

  function stop() {
    dispatch({ type: "stopping" });
    controller.current?.abort();
  }

  const running = Object.values(state.running);
  const benchProgress = benchStart ? Math.min(BENCHMARK_MS * 1.3, Date.now() - benchStart) : 0;

  return (
    <div className="grid grid-cols-1 gap-6 lg:grid-cols-[20rem_minmax(0,1fr)]">
      <div className="space-y-6">
        <Card title="Your offer">
          <div className="space-y-4">
            <Field label="Cores to use" hint={`This device has ${maxCores} logical core${maxCores === 1 ? "" : "s"}; keep one for yourself.`}>
              {(p) => <input {...p} type="number" min={1} max={Math.max(1, maxCores)} step={1} value={cores} disabled={active} onChange={(e) => setCores(e.target.value)} className={inputClass} />}
            </Field>
            <Field label="Price per second (credits)" hint="What you ask per second a task runs successfully on one core.">
              {(p) => <input {...p} type="number" min={0} step="any" value={price} disabled={active} onChange={(e) => setPrice(e.target.value)} className={inputClass} />}
            </Field>
            <GoingRate speed={state.speed} />
            {formError ? <Alert tone="error">{formError}</Alert> : null}
            {active ? (
              <Button variant="danger" className="w-full" onClick={stop} busy={state.phase === "stopping"}>
                Stop producing
              </Button>
            ) : (
              <Button className="w-full" onClick={() => void start()}>
                Start producing
              </Button>
            )}
          </div>
        </Card>
        <Card title="Controls for this tab">
          <ControlsForm
            controls={active ? state.controls : controls}
            where="browser"
            onApply={changeControls}
            applyLabel={active ? "Apply now" : "Keep for when I start"}
            testId="tab-controls"
          />
        </Card>
        <Card title="What happens">
          <ol className="list-decimal space-y-2 pl-5 text-sm text-slate-600">
            <li>A short benchmark measures how fast this browser computes.</li>
            <li>This tab joins the market as an opportunistic machine with your price.</li>
            <li>Tasks run in Web Workers, one per core, in a WebAssembly sandbox with no network and no access to your files.</li>
            <li>You are paid for each task that finishes. Stopping, or closing the tab, hands unfinished tasks back to the market.</li>
          </ol>
        </Card>
      </div>

      <div className="space-y-6">
        <Card title="Status" actions={<Badge value={badge(state)} testId="producer-status" />}>
          <p className="text-sm text-slate-600" role="status" aria-live="polite">
            {phaseLine(state, running.length)}
          </p>
          {state.phase === "benchmarking" ? (
            <div className="mt-3">
              <ProgressBar value={Math.round(benchProgress)} max={Math.round(BENCHMARK_MS * 1.3)} label="Benchmark" />
            </div>
          ) : null}
          <dl className="mt-4 grid grid-cols-2 gap-3 sm:grid-cols-3">
            <Stat label="Machine" value={state.machineId ? <span className="font-mono text-sm">{shortId(state.machineId)}</span> : "—"} testId="producer-machine-id" />
            <Stat label="Speed" value={state.speed != null ? `${number(state.speed, 2)}×` : "—"} testId="producer-speed" />
            <Stat label="Running" value={`${running.length} / ${state.slots}`} testId="producer-running" />
            <Stat label="Tasks done" value={state.done} testId="producer-done" />
            <Stat label="Accepted" value={state.accepted} testId="producer-accepted" />
            <Stat label="Earned" value={<Earned sinceStart={state.earned} accepted={state.accepted} />} />
          </dl>
          <p className="mt-3 text-xs text-slate-600" data-testid="speed-explained">
            {state.speed != null
              ? `Speed ${number(state.speed, 2)}× means each core of this browser does ${number(state.speed, 2)} seconds of the market's reference work per second (a reference machine is 1×), as the benchmark measured: a task of 10 s of reference work takes about ${seconds(10 / state.speed)} here. The market plans tasks, deadlines and leases with it.`
              : "Speed: how much of the market's reference work one core of this browser does per second (a reference machine is 1×), measured by a short benchmark when you start. The market plans tasks, deadlines and leases with it."}
          </p>
          {state.phase === "producing" ? (
            <div className="mt-4 flex flex-wrap gap-2">
              {state.controls.paused ? (
                <Button onClick={() => changeControls({ paused: false })} data-testid="producer-resume">
                  Resume
                </Button>
              ) : (
                <>
                  <Button variant="secondary" onClick={() => changeControls({ paused: true, handBack: "finish" })} data-testid="producer-pause">
                    Pause, let tasks finish
                  </Button>
                  <Button variant="secondary" onClick={() => changeControls({ paused: true, handBack: "now" })}>
                    Pause, hand tasks back now
                  </Button>
                </>
              )}
            </div>
          ) : null}
          {state.lastError && state.phase !== "idle" && state.marketAwaySince === null ? (
            <div className="mt-4">
              <Alert tone={state.phase === "failed" ? "error" : "warning"} title={state.phase === "failed" ? "Production stopped" : "Last problem"}>
                {state.lastError}
              </Alert>
            </div>
          ) : null}
        </Card>

        <EarningsCard />
        <StandingCard />

        <OtherMachines thisMachineId={state.machineId} />

        <Card title="Running now">
          {running.length === 0 ? (
            <p className="text-sm text-slate-500">{state.phase === "producing" ? "No task right now; waiting for work from the market." : "Nothing is running."}</p>
          ) : (
            <ul className="divide-y divide-slate-100 text-sm" aria-label="Running tasks">
              {running.map((t) => (
                <li key={t.leaseId} className="flex items-center justify-between py-2">
                  <span className="font-mono text-xs text-slate-700">
                    task {shortId(t.taskId)} · job {shortId(t.jobId)}
                  </span>
                  <span className="tabular-nums text-slate-500">{t.startedAt ? seconds((Date.now() - t.startedAt) / 1000) : "fetching…"}</span>
                </li>
              ))}
            </ul>
          )}
        </Card>

        <Card title="Last results">
          {state.recent.length === 0 ? (
            <p className="text-sm text-slate-500">Results of the tasks this tab runs appear here.</p>
          ) : (
            <ul className="divide-y divide-slate-100 text-sm" aria-label="Last results">
              {state.recent.map((r) => (
                <li key={r.leaseId} className="flex items-start justify-between gap-3 py-2">
                  <span>
                    <span className="font-mono text-xs text-slate-700">task {shortId(r.taskId)}</span>
                    {r.detail ? <span className="block text-xs text-slate-500">{r.detail}</span> : null}
                  </span>
                  <span className="flex shrink-0 items-center gap-2">
                    <span className="tabular-nums text-xs text-slate-500">
                      {r.elapsedMs ? seconds(r.elapsedMs / 1000) : ""} {time(r.at)}
                    </span>
                    <span
                      className={cx(
                        "rounded-full px-2 py-0.5 text-xs font-medium",
                        r.outcome === "accepted" ? "bg-emerald-100 text-emerald-800" : r.outcome === "finished" ? "bg-sky-100 text-sky-800" : r.outcome === "abandoned" ? "bg-slate-100 text-slate-600" : "bg-rose-100 text-rose-800",
                      )}
                    >
                      {r.outcome}
                    </span>
                  </span>
                </li>
              ))}
            </ul>
          )}
        </Card>
      </div>
    </div>
  );
}

/**
 * What the ledger says this producer has earned (all their machines, all time), with this tab's
 * own share since it started as a quieter estimate while the payments are being booked.
 */
function Earned({ sinceStart, accepted }: { sinceStart: number; accepted: number }) {
  // The same query as the Earnings card's "Last hour", so the two never disagree on one screen.
  const earnings = useEarnings();
  // An accepted result has just been paid: show it soon rather than at the next refresh.
  useReadAfterPayments(accepted);
  return (
    <>
      <span data-testid="producer-balance">{earnings.data ? credits(earnings.data.producerBalance) : earnings.isError ? "—" : "…"}</span>
      {sinceStart > 0 ? <span className="block text-xs font-normal text-slate-600">about {credits(sinceStart)} from this tab</span> : null}
    </>
  );
}

const OFF_WORDS: Record<OffReason, string> = {
  paused: "Paused: this tab is in the market but takes no task until you resume.",
  schedule: "Outside your schedule: this tab takes no task until the schedule allows it.",
  "in-use": "You are using this computer: this tab takes no task until the page is hidden or you are idle.",
};

function badge(state: State): string {
  if (state.phase !== "producing") return state.phase;
  if (state.marketAwaySince !== null) return "waiting";
  if (state.offReason === "paused") return "paused";
  if (state.offReason === "schedule") return "off schedule";
  if (state.offReason === "in-use") return "in use";
  return "producing";
}

function phaseLine(state: State, running: number): string {
  if ((state.phase === "producing" || state.phase === "registering") && state.marketAwaySince !== null) {
    return `Waiting for the market: reconnecting for ${awayFor(Date.now() - state.marketAwaySince)}. Running tasks go on, and their results are delivered once it is back.`;
  }
  if (state.phase === "producing" && state.offReason) return OFF_WORDS[state.offReason] + (running > 0 ? ` ${running} leased task${running === 1 ? "" : "s"} finishing.` : "");
  switch (state.phase) {
    case "idle":
      return "Not producing. Choose your cores and price, then start.";
    case "benchmarking":
      return "Measuring this browser's speed…";
    case "registering":
      return "Joining the market…";
    case "producing":
      return running > 0 ? `Running ${running} task${running === 1 ? "" : "s"} for the market.` : state.idle
          ? state.stream === "live"
            ? "In the market, waiting for tasks: the market tells this tab as soon as it has one."
            : "In the market, waiting for tasks."
          : "In the market.";
    case "stopping":
      return "Stopping: handing unfinished tasks back to the market…";
    case "stopped":
      return `Stopped. This tab ran ${state.done} task${state.done === 1 ? "" : "s"}.`;
    case "failed":
      return "Production stopped because of an error.";
  }
}

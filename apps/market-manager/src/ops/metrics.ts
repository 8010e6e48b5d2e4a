import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Pool } from "pg";
import type { LiveMachine, LiveState } from "../market/live.ts";

/** Buckets (seconds) for the journal's statements and the reports' waits: half a millisecond up, where a statement's time on an idle machine falls. */
const JOURNAL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The Market Manager's metrics in the Prometheus text format (`GET /metrics`). One registry per
 * running manager, so two managers in one process (tests) never count into each other.
 * The names are the ones docs/grafana-dashboard.json charts.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly submissions = new Counter({ name: "cyclemarket_submissions_total", help: "Jobs submitted, by the market's first answer", labelNames: ["outcome"], registers: [this.registry] });
  readonly decisions = new Counter({
    name: "cyclemarket_decisions_total",
    help: "Decisions applied, by outcome (admission, delay, rejection, placement, move, departure)",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly leases = new Counter({ name: "cyclemarket_leases_total", help: "Task leases handed to machines", registers: [this.registry] });
  readonly reports = new Counter({ name: "cyclemarket_reports_total", help: "Workers' reports of a run, by outcome", labelNames: ["outcome"], registers: [this.registry] });
  readonly takeovers = new Counter({ name: "cyclemarket_manager_takeovers_total", help: "Dead Market Managers whose machines and jobs this one took over", registers: [this.registry] });
  readonly settlements = new Counter({ name: "cyclemarket_settlements_total", help: "Jobs settled, by how they ended", labelNames: ["outcome"], registers: [this.registry] });
  readonly settlementSeconds = new Histogram({
    name: "cyclemarket_settlement_duration_seconds",
    help: "Time to settle a job (its ledger transaction)",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly api = new Histogram({
    name: "cyclemarket_api_duration_seconds",
    help: "tRPC query and mutation latency, by procedure and result",
    labelNames: ["procedure", "type", "ok"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  /**
   * The market's journal (market/journal.ts), the one connection its hot statements run on in
   * order: by kind of entry, how long each waited to be sent (stage "wait") and how long its
   * statement took from being sent to its answer, commit included (stage "write").
   */
  readonly journal = new Histogram({
    name: "cyclemarket_journal_seconds",
    help: "The journal's statements, by kind: time waiting to be sent (stage wait) and from sent to answered, commit included (stage write)",
    labelNames: ["kind", "stage"],
    buckets: JOURNAL_BUCKETS,
    registers: [this.registry],
  });
  /** How long each report waited for its group to be decided (report-batch.ts): reports gather while the journal's connection is full. */
  readonly reportGroupWait = new Histogram({
    name: "cyclemarket_report_group_wait_seconds",
    help: "Time a report waited for its group commit to be decided, from its arrival",
    buckets: JOURNAL_BUCKETS,
    registers: [this.registry],
  });
  readonly samples = new Counter({ name: "cyclemarket_history_samples_total", help: "History samples written", registers: [this.registry] });

  constructor(state: LiveState, pool: Pool | null) {
    // Process metrics, among them nodejs_eventloop_lag_seconds and the event-loop delay percentiles.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    const byKind = (name: string, help: string, of: (m: LiveMachine) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ["kind"],
        registers: [this.registry],
        collect() {
          const n = { opportunistic: 0, dedicated: 0 };
          for (const m of state.machines.values()) n[m.kind] += of(m);
          for (const [kind, v] of Object.entries(n)) this.set({ kind }, v);
        },
      });
    byKind("cyclemarket_machines", "Machines in the live market, by kind", () => 1);
    byKind("cyclemarket_slots", "Slots of the live market's machines, by kind", (m) => m.slots);
    new Gauge({
      name: "cyclemarket_tasks",
      help: "Tasks of unfinished jobs, by state",
      labelNames: ["state"],
      registers: [this.registry],
      collect() {
        const n: Record<string, number> = { pending: 0, queued: 0, leased: 0 };
        for (const t of state.tasks.values()) if (t.state in n) n[t.state]! += 1;
        for (const [s, v] of Object.entries(n)) this.set({ state: s }, v);
      },
    });
    if (pool) {
      new Gauge({
        name: "cyclemarket_db_pool_connections",
        help: "Database pool connections: total open, idle, and requests waiting for one",
        labelNames: ["state"],
        registers: [this.registry],
        collect() {
          this.set({ state: "total" }, pool.totalCount);
          this.set({ state: "idle" }, pool.idleCount);
          this.set({ state: "waiting" }, pool.waitingCount);
        },
      });
    }
  }
}

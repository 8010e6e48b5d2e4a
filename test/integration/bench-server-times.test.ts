import { describe, expect, it } from "vitest";
import { Histogram, Registry } from "prom-client";
import { serverTimes } from "../../apps/market-manager/bench/server-times.ts";

// The benches print the manager's own time per kind of call from its /metrics histogram: only the
// calls made after the load began, every outcome counted, each percentile the upper bound of the
// bucket it falls in.

describe("the benches' server-side call times", () => {
  it("count the calls since the load began, by procedure, as their buckets' upper bounds", async () => {
    const histogram = new Histogram({ name: "calls_seconds", help: "calls", labelNames: ["procedure", "ok"], buckets: [0.001, 0.01, 0.1], registers: [new Registry()] });
    histogram.observe({ procedure: "worker.heartbeat", ok: "true" }, 5); // before the load: not counted
    const times = await serverTimes(histogram);
    for (let i = 0; i < 98; i++) histogram.observe({ procedure: "worker.heartbeat", ok: "true" }, 0.0005);
    histogram.observe({ procedure: "worker.heartbeat", ok: "false" }, 0.05); // a refusal takes its time too
    histogram.observe({ procedure: "worker.heartbeat", ok: "true" }, 0.05);
    histogram.observe({ procedure: "jobs.get", ok: "true" }, 3); // past the last bucket
    expect(await times.since()).toEqual({
      "worker.heartbeat": { p50: 1, p99: 100, count: 100 },
      "jobs.get": { p50: null, p99: null, count: 1 },
    });
  });
});

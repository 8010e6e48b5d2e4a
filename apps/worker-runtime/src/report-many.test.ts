import { describe, expect, it } from "vitest";
import { batchReports } from "./report-many.ts";
import { refusalOf } from "./producer.ts";
import type { ReportManyRequest, ReportRequest } from "./api.ts";

const report = (leaseId: string): ReportRequest => ({ machineId: "m1", leaseId, exitCode: 0, stdout: "", stderr: "", outputHash: "h", elapsedMs: 1 });

describe("reports sent together", () => {
  it("go as one call, each answered on its own, a refusal carrying its reason as a single call's would", async () => {
    const calls: ReportManyRequest[] = [];
    const send = batchReports(
      async (input) => {
        calls.push(input);
        return {
          answers: input.reports.map((r) =>
            r.leaseId === "stale" ? { accepted: false, error: { code: "CONFLICT", reason: { code: "stale-lease" }, message: "not current" } } : { accepted: true },
          ),
        };
      },
      async () => {
        throw new Error("the single call is not used by a market that takes several");
      },
    );
    const answers = await Promise.allSettled([send(report("a")), send(report("b")), send(report("stale")), send(report("c"))]);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.reports.map((r) => r.leaseId)).toEqual(["a", "b", "stale", "c"]);
    expect(answers.map((a) => (a.status === "fulfilled" ? a.value.accepted : refusalOf(a.reason)?.code))).toEqual([true, true, "stale-lease", true]);
  });

  it("go one by one to a market without the call, from its first answer on", async () => {
    let many = 0;
    const singles: string[] = [];
    const send = batchReports(
      async () => {
        many++;
        throw Object.assign(new Error("No procedure found"), { data: { code: "NOT_FOUND" } });
      },
      async (r) => (singles.push(r.leaseId), { accepted: true }),
    );
    expect(await Promise.all([send(report("a")), send(report("b"))])).toEqual([{ accepted: true }, { accepted: true }]);
    expect(await send(report("c"))).toEqual({ accepted: true });
    expect(many).toBe(1);
    expect(singles).toEqual(["a", "b", "c"]);
  });

  it("ask for the next tasks in the same call, for the slots they free, and hand the leases on before the answers", async () => {
    const calls: ReportManyRequest[] = [];
    const order: string[] = [];
    const send = batchReports(
      async (input) => {
        calls.push(input);
        const leases = [{ leaseId: "n1", taskId: "t1", jobId: "j", moduleHash: "h", args: [], stdin: "", limits: { wallMs: 1, memoryPages: 1, outputBytes: 1 }, expiresAt: 1 }];
        return { answers: input.reports.map(() => ({ accepted: true })), leases };
      },
      async () => ({ accepted: true }),
      {
        ask: (reports) => ({ machineId: "m1", max: reports.length }),
        leased: (leases, asked) => order.push(`leased ${leases.map((l) => l.leaseId).join()} of ${asked.max}`),
      },
    );
    await Promise.all([send(report("a")), send(report("b"))].map((p) => p.then(() => order.push("answered"))));
    expect(calls.map((c) => c.lease)).toEqual([{ machineId: "m1", max: 2 }]);
    expect(order).toEqual(["leased n1 of 2", "answered", "answered"]);
  });
});

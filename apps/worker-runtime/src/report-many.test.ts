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
});

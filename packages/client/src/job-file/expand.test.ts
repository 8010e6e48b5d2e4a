import { describe, expect, it } from "vitest";
import { JobFile } from "./job-file.ts";
import { JobFileProblem, jobRequest } from "./expand.ts";
import { checkJobRequest } from "./refusal.ts";
import { sandboxPathProblem } from "./sandbox-path.ts";
import { JOB_LIMITS } from "./limits.ts";

const HASH = "a".repeat(64);
const benefit = { kind: "constant", value: 10 };
const files: Record<string, Uint8Array> = { "in/0.bin": new Uint8Array([0, 255]), "in/1.bin": new Uint8Array([1]), "list.txt": new TextEncoder().encode("alpha\n\nbeta\r\n") };
const read = (path: string) => {
  const f = files[path];
  if (!f) throw new JobFileProblem({ code: "input-file-missing", path }, path);
  return f;
};
const decode = (b64: string) => [...Buffer.from(b64, "base64")];

describe("job files", () => {
  it("writes out counted tasks, filling {i} into args, stdin's file, env and input files", () => {
    const job = JobFile.parse({ name: "n", module: "m.wasm", benefit, tasks: { count: 2, args: ["{i}", "x"], stdin: { file: "in/{i}.bin" }, env: { K: "v{i}" }, files: { "data/f": "in/{i}.bin" } } });
    const req = jobRequest(job, HASH, read);
    expect(req.source.tasks.map((t) => t.args)).toEqual([["0", "x"], ["1", "x"]]);
    expect(decode(req.source.tasks[0]!.stdin)).toEqual([0, 255]);
    expect(req.source.tasks[1]!.env).toEqual({ K: "v1" });
    expect(decode(req.source.tasks[1]!.files["data/f"]!)).toEqual([1]);
    expect(req.source.limits).toEqual({ memoryMb: 64, wallSeconds: 120 });
  });

  it("may leave out the work per task: the request then has none, and the market runs pilots", () => {
    const job = JobFile.parse({ name: "n", module: "m.wasm", benefit, tasks: [{}] });
    expect(job.workPerTask).toBeUndefined();
    const req = jobRequest(job, HASH, read);
    expect("workPerTask" in req.source).toBe(false);
    expect(jobRequest(JobFile.parse({ name: "n", module: "m.wasm", benefit, workPerTask: 2.5, tasks: [{}] }), HASH, read).source.workPerTask).toBe(2.5);
    const bad = JobFile.safeParse({ name: "n", module: "m.wasm", benefit, workPerTask: 1e6, tasks: [{}] });
    expect(bad.success ? null : bad.error.issues[0]).toMatchObject({ path: ["workPerTask"], message: "A task's work estimate is at least 0.001 and at most 86400 seconds (a day) of reference CPU." });
    expect(JobFile.safeParse({ name: "n", module: "m.wasm", benefit, workPerTask: 0, tasks: [{}] }).success).toBe(false);
  });

  it("makes one task per non-empty line", () => {
    const job = JobFile.parse({ name: "n", module: "m.wasm", benefit, tasks: { lines: "list.txt", args: ["{line}", "{i}"] } });
    expect(jobRequest(job, HASH, read).source.tasks.map((t) => t.args)).toEqual([["alpha", "0"], ["beta", "1"]]);
  });

  it("refuses unknown keys, so a misspelt key is not dropped", () => {
    const parsed = JobFile.safeParse({ name: "n", module: "m.wasm", benefit, tasks: [{ arg: ["1"] }] });
    expect(parsed.success).toBe(false);
  });

  it("refuses input file names that would leave the task's folder, saying why", () => {
    expect(["../x", "a/../../b", "/etc/passwd", "C:x", "a\0b", "a\\b", "", "ok/../fine"].map(sandboxPathProblem)).toEqual(["parent", "parent", "absolute", "absolute", "nul", "backslash", "empty", "parent"]);
    expect(sandboxPathProblem("data/in.txt")).toBeNull();
    expect([".", "./.", "./", "././", "./././."].map(sandboxPathProblem)).toEqual(Array(5).fill("root"));
    expect(sandboxPathProblem("./in.txt")).toBeNull();
    const job = JobFile.parse({ name: "n", module: "m.wasm", benefit, tasks: [{ files: { "../f": "in/0.bin" } }] });
    expect(() => jobRequest(job, HASH, read)).toThrow(JobFileProblem);
  });

  it("names the limit and the value when stdin or the job's input is too large", () => {
    const big = Buffer.alloc(JOB_LIMITS.stdinBytesPerTask + 1).toString("base64");
    const task = { args: [], env: {}, files: {} };
    expect(checkJobRequest({ source: { kind: "module", moduleHash: HASH, workPerTask: 1, limits: { memoryMb: 1, wallSeconds: 1 }, tasks: [{ ...task, stdin: "" }, { ...task, stdin: big }] } })).toEqual({
      code: "stdin-too-large",
      task: 1,
      bytes: JOB_LIMITS.stdinBytesPerTask + 1,
      maxBytes: JOB_LIMITS.stdinBytesPerTask,
    });
    const most = Buffer.alloc(JOB_LIMITS.stdinBytesPerTask).toString("base64");
    const many = Array.from({ length: 33 }, () => ({ ...task, stdin: most }));
    expect(checkJobRequest({ source: { kind: "module", moduleHash: HASH, workPerTask: 1, limits: { memoryMb: 1, wallSeconds: 1 }, tasks: many } })).toMatchObject({ code: "job-input-too-large", maxBytes: JOB_LIMITS.inputBytesPerJob });
  });
});

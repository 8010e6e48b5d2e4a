import { describe, expect, it } from "vitest";
import { JobFile } from "@cyclemarket/client/job-file";
import { fillFromJobFile, formJobFile, parseTaskLine, parseTaskLines } from "./form-job-file";

const common = { benefit: { kind: "constant" as const, value: 10 }, replicas: 2, workPerTask: 3, memoryMb: 32, wallSeconds: 30 };

describe("the job file the simple form shows", () => {
  it("is a valid job file that says what the form submits", () => {
    const file = formJobFile({ ...common, name: "sweep", moduleName: "program.wasm", stdin: "", tasks: { kind: "list", lines: [{ args: ["1", "a b"] }, { args: [] }] } });
    const parsed = JobFile.parse(JSON.parse(JSON.stringify(file)));
    expect(parsed).toMatchObject({ name: "sweep", module: "program.wasm", replicas: 2, workPerTask: 3, limits: { memoryMb: 32, wallSeconds: 30 }, tasks: [{ args: ["1", "a b"] }, { args: [] }] });
  });

  it("leaves the work per task out when the field is empty, and a job file without one fills it empty", () => {
    const file = JobFile.parse(formJobFile({ ...common, workPerTask: undefined, name: "n", moduleName: "m.wasm", stdin: "", tasks: { kind: "list", lines: [{ args: [] }] } }));
    expect(file.workPerTask).toBeUndefined();
    expect(fillFromJobFile(file)?.workPerTask).toBe("");
  });

  it("splits task lines as a shell does, with < FILE for a task's stdin", () => {
    expect(parseTaskLine(`7 "two words" 'it''s' a\\ b $HOME *.txt`)).toEqual({ args: ["7", "two words", "its", "a b", "$HOME", "*.txt"] });
    expect(parseTaskLine("8 4096 < inputs/8.txt")).toEqual({ args: ["8", "4096"], stdinFile: "inputs/8.txt" });
    expect(() => parseTaskLine("a | b")).toThrow(/"\|" is not an argument/);
    expect(parseTaskLines("1\n\n2 'x y'\n").lines).toEqual([{ args: ["1"] }, { args: ["2", "x y"] }]);
    expect(parseTaskLines("1\n2 > out").error).toMatch(/^Line 2:/);
  });

  it("generates tasks with {i} and one stdin for all, and a listed task's stdin file wins over it", () => {
    const counted = JobFile.parse(formJobFile({ ...common, name: "n", moduleName: "m.wasm", stdin: "line {i}\n", tasks: { kind: "count", count: 1000, args: ["{i}", "4096"] } }));
    expect(counted.tasks).toEqual({ count: 1000, args: ["{i}", "4096"], stdin: "line {i}\n" });
    const listed = JobFile.parse(formJobFile({ ...common, name: "n", moduleName: "m.wasm", stdin: "all", tasks: { kind: "list", lines: [{ args: ["1"] }, { args: ["2"], stdinFile: "in.txt" }] } }));
    expect(listed.tasks).toEqual([{ args: ["1"], stdin: "all" }, { args: ["2"], stdin: { file: "in.txt" } }]);
  });

  it("a dropped job file fills the form, quoting arguments so they split back the same", () => {
    const job = JobFile.parse({ name: "again", module: "build/p.wasm", benefit: common.benefit, tasks: [{ args: ["a b", "1"], stdin: { file: "x y.txt" } }, { args: ["2"] }] });
    const fill = fillFromJobFile(job)!;
    expect(fill).toMatchObject({ name: "again", moduleName: "p.wasm", tasksKind: "list" });
    expect(parseTaskLines(fill.taskLines).lines).toEqual([{ args: ["a b", "1"], stdinFile: "x y.txt" }, { args: ["2"] }]);
    expect(fillFromJobFile(JobFile.parse({ name: "e", module: "p.wasm", benefit: common.benefit, tasks: [{ env: { A: "1" } }] }))).toBeNull();
  });
});

import { describe, expect, it } from "vitest";
import { checkTaskEnv, checkTaskFilePath, checkTaskFiles, describeTaskInputRefusal } from "./task-inputs.ts";

describe("task input checks", () => {
  it("accepts relative paths inside the root", () => {
    expect(checkTaskFiles(["in.txt", "data/a.csv", "data/deep/b.bin", "dots..are.fine"])).toBeNull();
  });

  it.each([
    ["", "empty-path"],
    ["../x", "parent-segment"],
    ["a/../../x", "parent-segment"],
    ["a/..", "parent-segment"],
    ["/etc/passwd", "absolute-path"],
    ["a\0b", "nul-byte"],
    ["a//b", "bad-segment"],
    ["./a", "bad-segment"],
    ["a/", "bad-segment"],
    ["x".repeat(256), "path-too-long"],
  ])("refuses %j as %s", (path, code) => {
    const refusal = checkTaskFilePath(path);
    expect(refusal?.code).toBe(code);
    expect(describeTaskInputRefusal(refusal!)).toMatch(/\.$/);
  });

  it("refuses a file that another file needs as its directory", () => {
    expect(checkTaskFiles(["a", "a/b"])).toEqual({ code: "path-conflict", path: "a/b", other: "a" });
  });

  it("checks environment names and values", () => {
    expect(checkTaskEnv({ PATH: "/bin", EMPTY: "", X: "a=b" })).toBeNull();
    expect(checkTaskEnv({ "A=B": "1" })).toEqual({ code: "bad-env-name", name: "A=B" });
    expect(checkTaskEnv({ "": "1" })?.code).toBe("bad-env-name");
    expect(checkTaskEnv({ A: "x\0y" })).toEqual({ code: "nul-in-env-value", name: "A" });
  });
});

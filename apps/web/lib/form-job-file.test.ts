import { describe, expect, it } from "vitest";
import { JobFile } from "@cyclemarket/client/job-file";
import { formJobFile } from "./form-job-file";

describe("the job file the simple form shows", () => {
  it("is a valid job file that says what the form submits", () => {
    const file = formJobFile({
      name: "sweep",
      moduleName: "program.wasm",
      tasks: [{ args: ["1", "a b"] }, { args: [] }],
      benefit: { kind: "constant", value: 10 },
      replicas: 2,
      workPerTask: 3,
      memoryMb: 32,
    });
    const parsed = JobFile.parse(JSON.parse(JSON.stringify(file)));
    expect(parsed).toMatchObject({ name: "sweep", module: "program.wasm", replicas: 2, workPerTask: 3, limits: { memoryMb: 32 }, tasks: [{ args: ["1", "a b"] }, { args: [] }] });
  });
});

import { describe, expect, it } from "vitest";
import { parseJobFile } from "./load.ts";

describe("parseJobFile", () => {
  it("names a key left out as required, and keeps the schema's own words for a wrong value", () => {
    const job = { name: "x", module: "m.wasm", benefit: { kind: "deadline", value: 20 }, tasks: { count: 20_000 } };
    expect(() => parseJobFile(job, ".")).toThrow("the job file is not a valid job file: benefit.deadline: required (number); tasks.count: A job has at most 10000 tasks.");
  });
});

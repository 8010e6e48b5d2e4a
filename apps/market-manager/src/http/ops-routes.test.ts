import { describe, expect, it } from "vitest";
import { withLabel } from "./ops-routes.ts";

describe("the manager's label on /metrics", () => {
  it("is added to every sample, with or without labels of its own, and to no comment", () => {
    const text = ["# HELP a_total A", "# TYPE a_total counter", 'a_total{outcome="ok"} 3', "b 1.5", 'c_bucket{le="+Inf"} 2', ""].join("\n");
    expect(withLabel(text, "manager", "manager-2").split("\n")).toEqual([
      "# HELP a_total A",
      "# TYPE a_total counter",
      'a_total{manager="manager-2",outcome="ok"} 3',
      'b{manager="manager-2"} 1.5',
      'c_bucket{manager="manager-2",le="+Inf"} 2',
      "",
    ]);
  });
});

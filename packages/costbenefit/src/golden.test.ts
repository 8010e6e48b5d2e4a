import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GoldenScenario, replayGolden } from "./golden.ts";

// Each golden scenario (golden/*.json) holds the decisions the market must make; the engine must
// make exactly those. test/integration/golden.test.ts holds the live market to the same files.
const dir = join(import.meta.dirname, "..", "golden");
const files = readdirSync(dir).filter((f) => f.endsWith(".json"));

describe("golden scenarios, replayed by the engine", () => {
  it("exist", () => expect(files.length).toBeGreaterThanOrEqual(3));
  for (const file of files) {
    it(file, () => {
      const scenario = GoldenScenario.parse(JSON.parse(readFileSync(join(dir, file), "utf8")));
      expect(replayGolden(scenario)).toEqual(scenario.jobs.map((j) => j.expect));
    });
  }
});

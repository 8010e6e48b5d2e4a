import { describe, expect, it } from "vitest";
import { runTask } from "@cyclemarket/worker-runtime";
import { probeAnswer, probeModule, PROBE_ROUNDS } from "./probes.ts";

describe("probe tasks", () => {
  it("the market knows what the probe module prints, run in the real sandbox", async () => {
    for (const seed of ["00000000000000000000000000000000", "9f86d081884c7d659a2feaa0c55ad015", "ffffffffffffffffffffffffffffffff"]) {
      const outcome = await runTask({ module: probeModule(), args: [seed, String(PROBE_ROUNDS)], stdin: new Uint8Array(), seed: "probe", limits: { memoryPages: 64, outputBytes: 1024 } });
      expect(outcome.exitCode).toBe(0);
      expect(Buffer.from(outcome.stdout).toString("utf8")).toBe(probeAnswer(seed, PROBE_ROUNDS));
    }
  });

  it("gives different answers for different seeds, so an answer cannot be reused", () => {
    const answers = new Set(Array.from({ length: 200 }, (_, i) => probeAnswer(i.toString(16).padStart(32, "0"), PROBE_ROUNDS)));
    expect(answers.size).toBe(200);
    // One round of FNV-1a 64 over "a" is a published value.
    expect(probeAnswer("a", 1)).toBe("af63dc4c8601ec8c\n");
  });
});

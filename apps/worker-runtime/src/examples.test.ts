import { describe, expect, it } from "vitest";
import { fromBase64 } from "./base64.ts";
import { EXAMPLES, MandelbrotParams, PENDING_RGB, combineExample, mandelbrotRgba, planExample, type MandelbrotResult } from "./examples.ts";
import { runTask } from "./sandbox.ts";
import { exampleBytes } from "./testing/fixtures.ts";

const limits = { memoryPages: 256, outputBytes: 4 << 20 };
const text = (b: Uint8Array) => new TextDecoder().decode(b);

async function runJob(name: keyof typeof EXAMPLES, params: unknown, tasks: number): Promise<string[]> {
  const plan = planExample(name, params, tasks);
  const module = await WebAssembly.compile(exampleBytes(name) as Uint8Array<ArrayBuffer>);
  const outcomes = await Promise.all(plan.tasks.map((args, i) => runTask({ module, args, seed: `job/${name}/${i}`, limits })));
  for (const o of outcomes) expect(o.error).toBeUndefined();
  return outcomes.map((o) => text(o.stdout));
}

describe("example jobs", () => {
  it("Monte Carlo estimates pi within a few hundredths", async () => {
    const outputs = await runJob("montecarlo", { samplesPerTask: 500_000 }, 8);
    const result = EXAMPLES.montecarlo.combine(outputs);
    expect(result.total).toBe(4_000_000);
    expect(result.tasks).toBe(8);
    expect(Math.abs(result.pi - Math.PI)).toBeLessThan(0.02);
    expect(result.absoluteError).toBeLessThan(5 * result.standardError + 1e-3);
  });

  it("Monte Carlo tasks of one job draw different samples", async () => {
    const outputs = await runJob("montecarlo", { samplesPerTask: 100_000 }, 4);
    expect(new Set(outputs).size).toBe(4);
  });

  it("prime counting splits a range and sums the counts", async () => {
    const outputs = await runJob("primes", { start: 0, end: 1_000_000 }, 7);
    const result = combineExample("primes", outputs);
    expect(result).toMatchObject({ kind: "primes", count: 78_498, covered: 1_000_000, start: 0, end: 1_000_000, tasks: 7 });
  });

  it("Mandelbrot tiles assemble into the whole picture, also from a partial set", async () => {
    const params = { imageSize: 96, tileSize: 32, maxIterations: 200 };
    expect(EXAMPLES.mandelbrot.taskCount(MandelbrotParams.parse(params), 1)).toBe(9);
    const outputs = await runJob("mandelbrot", params, 1);
    expect(outputs).toHaveLength(9);
    const full = combineExample("mandelbrot", outputs) as MandelbrotResult;
    expect(full).toMatchObject({ width: 96, height: 96, coveredPixels: 96 * 96, tasks: 9, invalidOutputs: 0 });
    const grey = fromBase64(full.pixels);
    expect(grey.length).toBe(96 * 96);
    // The centre-left of the picture (-0.25 + 0i) lies in the set; the top-left corner does not.
    expect(grey[48 * 96 + 64]).toBe(0);
    expect(grey[0]).toBeGreaterThan(0);
    expect(mandelbrotRgba(full, grey).length).toBe(96 * 96 * 4);

    const partial = combineExample("mandelbrot", outputs.slice(0, 4)) as MandelbrotResult;
    expect(partial.coveredPixels).toBe(4 * 32 * 32);
    expect(partial.width).toBe(96);
    // A tile not back yet is drawn as pending, not black like the inside of the set; a finished one as computed.
    const rgb = (rgba: Uint8ClampedArray, x: number, y: number) => [...rgba.slice((y * 96 + x) * 4, (y * 96 + x) * 4 + 3)];
    const drawn = mandelbrotRgba(partial, fromBase64(partial.pixels));
    const pending = rgb(drawn, 90, 90);
    expect(PENDING_RGB.map((c) => [...c])).toContainEqual(pending);
    expect(pending).not.toEqual([0, 0, 0]);
    expect(rgb(drawn, 0, 0)).toEqual(rgb(mandelbrotRgba(full, grey), 0, 0));
    expect(rgb(mandelbrotRgba(full, grey), 64, 48)).toEqual([0, 0, 0]);
  });

  it("counts malformed outputs instead of trusting them", () => {
    expect(combineExample("montecarlo", ["10 5\n", "nonsense", "3 4\n"])).toMatchObject({ tasks: 1, invalidOutputs: 2, inside: 3 });
    expect(combineExample("mandelbrot", ["0 0 8 8 4 10\n00\n"])).toMatchObject({ tasks: 0, invalidOutputs: 1 });
  });

  it("has a work estimate and default parameters for every example", () => {
    for (const example of Object.values(EXAMPLES)) {
      expect(example.defaultWorkPerTask).toBeGreaterThan(0);
      const params = (example.params as { parse(v: unknown): unknown }).parse({});
      expect(planExample(example.name, params, 20).workPerTask).toBeCloseTo(example.defaultWorkPerTask, 6);
    }
  });
});

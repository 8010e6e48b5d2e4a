// The example jobs that ship with the market (docs/DESIGN.md, "Jobs, tasks and the sandbox"):
// how to split each into tasks, what a task costs, and how task outputs become the job's
// result. No file system here: the web page imports this catalog too. The modules
// themselves are built to examples/build/<name>.wasm (package export "./examples/*").
import { z } from "zod";
import { toBase64 } from "./base64.ts";

export const ExampleName = z.enum(["montecarlo", "mandelbrot", "primes"]);
export type ExampleName = z.infer<typeof ExampleName>;

export interface ExampleJob<P, R> {
  name: ExampleName;
  title: string;
  description: string;
  /** The module's file name under examples/build. */
  moduleFile: string;
  /** The job's parameters, with defaults: `params.parse({})` gives the defaults. */
  params: z.ZodType<P>;
  /** How many tasks the job has, given the count the consumer asked for (some examples fix it). */
  taskCount(params: P, requested: number): number;
  /** argv (after the program name) of task `index` of `count`. */
  taskArgs(index: number, count: number, params: P): string[];
  /** Normalized seconds (work units, see benchmark.ts) one task takes with the default parameters. */
  defaultWorkPerTask: number;
  /** Normalized seconds one task of this job takes. */
  workPerTask(params: P, count: number): number;
  /** Turns the stdouts of the finished tasks (any subset, any order) into the job's result. */
  combine(outputs: string[]): R;
}

// Work per unit of each kernel, in normalized seconds, measured on the reference machine
// (the same machine whose benchmark figure is REFERENCE_KERNEL_RATE in benchmark.ts).
const MONTECARLO_SECONDS_PER_SAMPLE = 9.4e-9;
const PRIMES_SECONDS_PER_NUMBER = 3.0e-8;
const MANDELBROT_SECONDS_PER_ITERATION = 4.6e-9;
// Of the default picture, 17% of the pixels lie in the set and run every iteration; the
// others escape after about 30 on average.
const MANDELBROT_INSIDE_FRACTION = 0.17;
const MANDELBROT_OUTSIDE_ITERATIONS = 30;
// A fixed cost per task: compiling and instantiating the module, writing the output.
const TASK_OVERHEAD_SECONDS = 0.002;

// ---------- Monte Carlo pi ----------

export const MonteCarloParams = z.object({
  samplesPerTask: z.number().int().min(1).max(1_000_000_000).default(10_000_000),
});
export type MonteCarloParams = z.infer<typeof MonteCarloParams>;

export interface MonteCarloResult {
  kind: "montecarlo";
  tasks: number;
  invalidOutputs: number;
  inside: number;
  total: number;
  /** 4 * inside / total; NaN before any task finished. */
  pi: number;
  /** One standard error of the estimate. */
  standardError: number;
  /** |pi - Math.PI|, to show how close the market got. */
  absoluteError: number;
}

const montecarlo: ExampleJob<MonteCarloParams, MonteCarloResult> = {
  name: "montecarlo",
  title: "Monte Carlo pi",
  description: "Throws random points at a square and counts those landing inside the quarter circle; more samples, better pi.",
  moduleFile: "montecarlo.wasm",
  params: MonteCarloParams,
  taskCount: (_params, requested) => requested,
  // The index salts the task's generator on top of the sandbox's per-task seed.
  taskArgs: (index, _count, p) => [String(p.samplesPerTask), String(index)],
  defaultWorkPerTask: TASK_OVERHEAD_SECONDS + 10_000_000 * MONTECARLO_SECONDS_PER_SAMPLE,
  workPerTask: (p) => TASK_OVERHEAD_SECONDS + p.samplesPerTask * MONTECARLO_SECONDS_PER_SAMPLE,
  combine(outputs) {
    let inside = 0;
    let total = 0;
    let tasks = 0;
    let invalidOutputs = 0;
    for (const out of outputs) {
      const m = /^(\d+) (\d+)\n?$/.exec(out);
      const i = m ? Number(m[1]) : NaN;
      const t = m ? Number(m[2]) : NaN;
      if (!m || i > t) {
        invalidOutputs++;
        continue;
      }
      inside += i;
      total += t;
      tasks++;
    }
    const p = total > 0 ? inside / total : NaN;
    const pi = 4 * p;
    return {
      kind: "montecarlo",
      tasks,
      invalidOutputs,
      inside,
      total,
      pi,
      standardError: total > 0 ? 4 * Math.sqrt((p * (1 - p)) / total) : NaN,
      absoluteError: Math.abs(pi - Math.PI),
    };
  },
};

// ---------- Prime counting ----------

export const PrimesParams = z
  .object({
    start: z.number().int().min(0).max(1e12).default(0),
    end: z.number().int().min(1).max(1e12).default(50_000_000),
  })
  .refine((p) => p.end > p.start, { message: "end must be above start", path: ["end"] });
export type PrimesParams = z.infer<typeof PrimesParams>;

export interface PrimesResult {
  kind: "primes";
  tasks: number;
  invalidOutputs: number;
  /** Primes found in the ranges counted so far. */
  count: number;
  /** How many numbers the finished tasks covered. */
  covered: number;
  start: number | null;
  end: number | null;
}

function primesRange(index: number, count: number, p: PrimesParams): [number, number] {
  const span = p.end - p.start;
  const lo = p.start + Math.floor((span * index) / count);
  const hi = p.start + Math.floor((span * (index + 1)) / count);
  return [lo, hi];
}

const primes: ExampleJob<PrimesParams, PrimesResult> = {
  name: "primes",
  title: "Prime counting",
  description: "Counts the primes in a range of integers, split into equal sub-ranges sieved in parallel.",
  moduleFile: "primes.wasm",
  params: PrimesParams,
  taskCount: (p, requested) => Math.max(1, Math.min(requested, p.end - p.start)),
  taskArgs: (index, count, p) => primesRange(index, count, p).map(String),
  defaultWorkPerTask: TASK_OVERHEAD_SECONDS + (50_000_000 / 20) * PRIMES_SECONDS_PER_NUMBER,
  workPerTask: (p, count) => TASK_OVERHEAD_SECONDS + ((p.end - p.start) / Math.max(1, count)) * PRIMES_SECONDS_PER_NUMBER,
  combine(outputs) {
    let count = 0;
    let covered = 0;
    let tasks = 0;
    let invalidOutputs = 0;
    let start: number | null = null;
    let end: number | null = null;
    for (const out of outputs) {
      const m = /^(\d+) (\d+) (\d+)\n?$/.exec(out);
      if (!m) {
        invalidOutputs++;
        continue;
      }
      const [lo, hi, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
      if (hi < lo || c > hi - lo) {
        invalidOutputs++;
        continue;
      }
      count += c;
      covered += hi - lo;
      tasks++;
      start = start === null ? lo : Math.min(start, lo);
      end = end === null ? hi : Math.max(end, hi);
    }
    return { kind: "primes", tasks, invalidOutputs, count, covered, start, end };
  },
};

// ---------- Mandelbrot tiles ----------

export const MandelbrotParams = z.object({
  imageSize: z.number().int().min(8).max(4096).default(512),
  tileSize: z.number().int().min(8).max(1024).default(64),
  maxIterations: z.number().int().min(1).max(100_000).default(1000),
});
export type MandelbrotParams = z.infer<typeof MandelbrotParams>;

export interface MandelbrotResult {
  kind: "mandelbrot";
  tasks: number;
  invalidOutputs: number;
  /** 0 until a tile arrived. */
  width: number;
  height: number;
  maxIterations: number;
  /** Grey levels, row-major, width * height bytes, base64; 0 where the set is or no tile arrived yet. */
  pixels: string;
  /** Pixels covered by the finished tiles. */
  coveredPixels: number;
  /** The finished tiles, [x, y, width, height] each: the rest of the picture is still pending. Absent in results stored before it was kept: all covered. */
  tiles?: [number, number, number, number][];
}

const tilesPerSide = (p: MandelbrotParams) => Math.ceil(p.imageSize / p.tileSize);

const mandelbrot: ExampleJob<MandelbrotParams, MandelbrotResult> = {
  name: "mandelbrot",
  title: "Mandelbrot tiles",
  description: "Draws the Mandelbrot set tile by tile; the picture fills in as tiles come back from producers.",
  moduleFile: "mandelbrot.wasm",
  params: MandelbrotParams,
  taskCount: (p) => tilesPerSide(p) ** 2,
  taskArgs(index, _count, p) {
    const side = tilesPerSide(p);
    const x = (index % side) * p.tileSize;
    const y = Math.floor(index / side) * p.tileSize;
    return [x, y, p.tileSize, p.imageSize, p.maxIterations].map(String);
  },
  // An average over tiles: tiles inside the set cost up to six times the estimate.
  defaultWorkPerTask:
    TASK_OVERHEAD_SECONDS + 64 * 64 * (MANDELBROT_INSIDE_FRACTION * 1000 + MANDELBROT_OUTSIDE_ITERATIONS) * MANDELBROT_SECONDS_PER_ITERATION,
  workPerTask: (p) =>
    TASK_OVERHEAD_SECONDS +
    p.tileSize ** 2 * (MANDELBROT_INSIDE_FRACTION * p.maxIterations + MANDELBROT_OUTSIDE_ITERATIONS) * MANDELBROT_SECONDS_PER_ITERATION,
  combine(outputs) {
    const tiles: { x: number; y: number; w: number; h: number; rows: string[] }[] = [];
    let size = 0;
    let maxIterations = 0;
    let invalidOutputs = 0;
    for (const out of outputs) {
      const lines = out.split("\n");
      const head = /^(\d+) (\d+) (\d+) (\d+) (\d+) (\d+)$/.exec(lines[0] ?? "");
      if (!head) {
        invalidOutputs++;
        continue;
      }
      const [x, y, w, h, s, it] = head.slice(1).map(Number) as [number, number, number, number, number, number];
      const rows = lines.slice(1, 1 + h);
      const fits = x + w <= s && y + h <= s && (size === 0 || s === size) && s <= 4096;
      if (!fits || rows.length !== h || rows.some((r) => r.length !== w * 2 || !/^[0-9a-f]*$/.test(r))) {
        invalidOutputs++;
        continue;
      }
      size = s;
      maxIterations = it;
      tiles.push({ x, y, w, h, rows });
    }
    const grey = new Uint8Array(size * size);
    let coveredPixels = 0;
    for (const t of tiles) {
      t.rows.forEach((row, dy) => {
        for (let dx = 0; dx < t.w; dx++) grey[(t.y + dy) * size + t.x + dx] = parseInt(row.slice(dx * 2, dx * 2 + 2), 16);
      });
      coveredPixels += t.w * t.h;
    }
    return {
      kind: "mandelbrot",
      tasks: tiles.length,
      invalidOutputs,
      width: size,
      height: size,
      maxIterations,
      pixels: toBase64(grey),
      coveredPixels,
      tiles: tiles.map((t) => [t.x, t.y, t.w, t.h]),
    };
  },
};

/** The light grey stripes of a tile not computed yet: unlike anything the palette draws. */
export const PENDING_RGB = [[226, 232, 240], [203, 213, 225]] as const;

/**
 * RGBA bytes for `new ImageData(rgba, result.width, result.height)`: a blue-to-white palette,
 * black inside the set, and light grey diagonal stripes where no tile has arrived yet.
 */
export function mandelbrotRgba(result: MandelbrotResult, pixels: Uint8Array): Uint8ClampedArray<ArrayBuffer> {
  const rgba = new Uint8ClampedArray(result.width * result.height * 4);
  let covered: Uint8Array | null = null;
  if (result.tiles && result.coveredPixels < result.width * result.height) {
    covered = new Uint8Array(result.width * result.height);
    for (const [x, y, w, h] of result.tiles) for (let dy = 0; dy < h; dy++) covered.fill(1, (y + dy) * result.width + x, (y + dy) * result.width + x + w);
  }
  for (let i = 0; i < result.width * result.height; i++) {
    if (covered && !covered[i]) {
      const stripe = PENDING_RGB[Math.floor(((i % result.width) + Math.floor(i / result.width)) / 6) % 2]!;
      rgba.set(stripe, i * 4);
      rgba[i * 4 + 3] = 255;
      continue;
    }
    const g = pixels[i] ?? 0;
    rgba[i * 4] = g < 128 ? 0 : (g - 128) * 2;
    rgba[i * 4 + 1] = g < 128 ? g : 255;
    rgba[i * 4 + 2] = g === 0 ? 0 : Math.min(255, 64 + g * 2);
    rgba[i * 4 + 3] = 255;
  }
  return rgba;
}

export type ExampleResult = MonteCarloResult | PrimesResult | MandelbrotResult;

/** The catalog, by name. Parameters are validated with each example's `params` schema. */
export const EXAMPLES = {
  montecarlo,
  mandelbrot,
  primes,
} satisfies Record<ExampleName, // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each entry has its own parameter type
  ExampleJob<any, ExampleResult>>;

export function combineExample(name: ExampleName, outputs: string[]): ExampleResult {
  return EXAMPLES[name].combine(outputs);
}

/** Everything a job upload needs from an example: the args of each task and the work estimate. */
export function planExample(name: ExampleName, rawParams: unknown, requestedTasks: number): { tasks: string[][]; workPerTask: number } {
  const example = EXAMPLES[name] as unknown as ExampleJob<unknown, ExampleResult>;
  const params = example.params.parse(rawParams ?? {});
  const count = example.taskCount(params, requestedTasks);
  const tasks = Array.from({ length: count }, (_, i) => example.taskArgs(i, count, params));
  return { tasks, workPerTask: example.workPerTask(params, count) };
}

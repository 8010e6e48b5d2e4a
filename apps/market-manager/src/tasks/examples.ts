import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { EXAMPLES, combineExample, planExample, ExampleName } from "@cyclemarket/worker-runtime";

const require = createRequire(import.meta.url);

const modules = new Map<ExampleName, Uint8Array>();

/**
 * The compiled module of a shipped example (built by the worker runtime at install), read once:
 * every quote of an example job needs it, and a read from disk on the market's thread waits as
 * long as the disk does.
 */
export function exampleModule(name: ExampleName): Uint8Array {
  let bytes = modules.get(name);
  if (!bytes) modules.set(name, (bytes = readFileSync(require.resolve(`@cyclemarket/worker-runtime/examples/${EXAMPLES[name].moduleFile}`))));
  return bytes;
}

let byHash: Map<string, ExampleName> | null = null;

/**
 * The example whose shipped module has this hash, if any: a job that names it by hash (a job
 * file, "Run again" on an example job) is that example's job, so its page draws its result.
 */
export function exampleOfModule(hash: string): ExampleName | null {
  byHash ??= new Map(ExampleName.options.map((name) => [createHash("sha256").update(exampleModule(name)).digest("hex"), name]));
  return byHash.get(hash) ?? null;
}

/** A completed job's result: an example's combined answer, or else how many outputs it has (one per task). */
export function combineOutputs(example: string | null, outputs: string[]) {
  const parsed = ExampleName.safeParse(example);
  if (!parsed.success) return countedOutputs(outputs.length);
  return combineExample(parsed.data, outputs);
}

/** The result of a completed job that is not an example: its outputs are its tasks'. */
export const countedOutputs = (tasks: number) => ({ kind: "outputs", tasks });

export { planExample, EXAMPLES, ExampleName };

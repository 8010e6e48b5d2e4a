import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { EXAMPLES, combineExample, planExample, ExampleName } from "@cyclemarket/worker-runtime";

const require = createRequire(import.meta.url);

/** The compiled module of a shipped example (built by the worker runtime at install). */
export function exampleModule(name: ExampleName): Uint8Array {
  const path = require.resolve(`@cyclemarket/worker-runtime/examples/${EXAMPLES[name].moduleFile}`);
  return readFileSync(path);
}

export function combineOutputs(example: string | null, outputs: string[]) {
  const parsed = ExampleName.safeParse(example);
  if (!parsed.success) return { kind: "outputs", tasks: outputs.length };
  return combineExample(parsed.data, outputs);
}

export { planExample, EXAMPLES, ExampleName };

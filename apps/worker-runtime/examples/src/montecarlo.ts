// Monte Carlo estimate of pi: draws `samples` points in the unit square and counts those
// inside the quarter circle. Args: samples [taskIndex]. Prints "inside total".
// The generator is seeded from WASI random_get, which the market's sandbox derives from
// the task id, so two honest machines print the same line.
import { randomSeed, nextF64 } from "./rng";

const argv = process.argv;
if (argv.length < 2) {
  process.stderr.write("usage: montecarlo <samples> [taskIndex]\n");
  process.exit(2);
}
const samples = <u64>parseFloat(argv[1]);
const taskIndex = argv.length > 2 ? <u64>parseFloat(argv[2]) : 0;
randomSeed(taskIndex);

let inside: u64 = 0;
for (let i: u64 = 0; i < samples; i++) {
  const x = nextF64();
  const y = nextF64();
  if (x * x + y * y <= 1.0) inside++;
}
process.stdout.write(inside.toString() + " " + samples.toString() + "\n");

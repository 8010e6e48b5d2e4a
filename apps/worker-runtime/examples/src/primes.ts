// Counts the primes p with start <= p < end by a segmented sieve of Eratosthenes,
// so memory stays small whatever the range. Args: start end. Prints "start end count".
const argv = process.argv;
if (argv.length < 3) {
  process.stderr.write("usage: primes <start> <end>\n");
  process.exit(2);
}
const start = <u64>parseFloat(argv[1]);
const end = <u64>parseFloat(argv[2]);

const SEGMENT: u64 = 1 << 16;

// Base primes up to sqrt(end).
let limit: u64 = <u64>Math.sqrt(<f64>end) + 1;
const small = new Uint8Array(<i32>limit + 1);
const base = new Array<u64>();
for (let i: u64 = 2; i <= limit; i++) {
  if (small[<i32>i] == 0) {
    base.push(i);
    for (let j = i * i; j <= limit; j += i) small[<i32>j] = 1;
  }
}

let count: u64 = 0;
const segment = new Uint8Array(<i32>SEGMENT);
let low = start < 2 ? <u64>2 : start;
while (low < end) {
  const high = low + SEGMENT < end ? low + SEGMENT : end;
  segment.fill(0);
  for (let k = 0; k < base.length; k++) {
    const p = unchecked(base[k]);
    if (p * p >= high) break;
    let first = (low + p - 1) / p * p;
    if (first < p * p) first = p * p;
    for (let j = first; j < high; j += p) segment[<i32>(j - low)] = 1;
  }
  const span = <i32>(high - low);
  for (let i = 0; i < span; i++) if (segment[i] == 0) count++;
  low = high;
}
process.stdout.write(start.toString() + " " + end.toString() + " " + count.toString() + "\n");

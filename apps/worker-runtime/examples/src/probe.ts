// The market's probe task (not an example): proves a dedicated machine is there and runs what it
// is sent. Args: seed rounds. Prints the 64-bit FNV-1a hash of the seed's characters, hashed
// `rounds` times over, as 16 hex digits. The market draws the seed and knows the answer
// (market-manager resources/probes.ts computes the same).
const argv = process.argv;
if (argv.length < 3) {
  process.stderr.write("usage: probe <seed> <rounds>\n");
  process.exit(2);
}
const seed = argv[1];
const rounds = argv.length > 2 ? <i32>parseInt(argv[2]) : 1;
let h: u64 = 0xcbf29ce484222325;
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < seed.length; i++) {
    h ^= <u64>seed.charCodeAt(i);
    h *= 0x100000001b3;
  }
}
const digits = "0123456789abcdef";
let out = "";
for (let shift = 60; shift >= 0; shift -= 4) out += digits.charAt(<i32>((h >> <u64>shift) & 0xf));
process.stdout.write(out + "\n");

// xoshiro256** seeded from WASI random_get (through crypto.getRandomValues, which the
// wasi-shim maps to random_get), mixed with a caller-chosen salt.
let s0: u64 = 0, s1: u64 = 0, s2: u64 = 0, s3: u64 = 0;

function splitmix(x: u64): u64 {
  x += 0x9e3779b97f4a7c15;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9;
  x = (x ^ (x >> 27)) * 0x94d049bb133111eb;
  return x ^ (x >> 31);
}

export function randomSeed(salt: u64): void {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  const view = new DataView(bytes.buffer);
  s0 = view.getUint64(0, true) ^ splitmix(salt);
  s1 = view.getUint64(8, true) ^ splitmix(salt + 1);
  s2 = view.getUint64(16, true) ^ splitmix(salt + 2);
  s3 = view.getUint64(24, true) ^ splitmix(salt + 3);
  if ((s0 | s1 | s2 | s3) == 0) s0 = 1;
}

export function nextU64(): u64 {
  const result = rotl(s1 * 5, 7) * 9;
  const t = s1 << 17;
  s2 ^= s0;
  s3 ^= s1;
  s1 ^= s2;
  s0 ^= s3;
  s2 ^= t;
  s3 = rotl(s3, 45);
  return result;
}

// Uniform in [0, 1) with 53 random bits.
export function nextF64(): f64 {
  return <f64>(nextU64() >> 11) * (1.0 / 9007199254740992.0);
}

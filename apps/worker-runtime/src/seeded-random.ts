// The random source a task sees: xoshiro128** keyed by SHA-256 of the task's seed, so the
// same task gives the same bytes on every honest machine and different tasks differ.

export interface SeededRandom {
  fill(target: Uint8Array): void;
}

export async function seedKey(seed: string): Promise<Uint32Array> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`cyclemarket-task-seed:${seed}`));
  return new Uint32Array(digest.slice(0, 16));
}

export function seededRandom(key: Uint32Array): SeededRandom {
  let a = key[0]! >>> 0;
  let b = key[1]! >>> 0;
  let c = key[2]! >>> 0;
  let d = key[3]! >>> 0;
  if ((a | b | c | d) === 0) a = 1; // xoshiro must not start from the all-zero state

  function next(): number {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result;
  }

  return {
    fill(target) {
      for (let i = 0; i < target.length; i += 4) {
        let word = next();
        for (let j = i; j < Math.min(i + 4, target.length); j++) {
          target[j] = word & 0xff;
          word >>>= 8;
        }
      }
    },
  };
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

// How the machine tree (machine-tree.ts) groups machines: where each machine sits, and how a group
// is cut in two at its median along the axis where it is widest.
import type { MachineTable } from "./machine-table.ts";

/** Axes of a machine's place: see `coordinates`. */
export const DIMS = 3;
/** Machines per leaf, at most, when the tree is built (the leaves share a group evenly). */
export const LEAF = 16;

/**
 * Where a machine sits in the tree: the logarithms of its compute and memory cost factors (A and
 * B above, at its last event) and of its price per work unit, so one unit along any axis is about
 * the same factor of a cost. (Speed and bandwidth as axes too made the search slower: finishes
 * matter to deadlines only, and the bounds of nodes split along them were looser in cost.)
 */
export function coordinates(m: MachineTable, row: number, lnRef: number, H: number, out: Float64Array): void {
  const f = m.f;
  const cap = f.capacity[row]!;
  const mem = f.memoryPerSlot[row]! * f.slots[row]!;
  const backlog = Math.max(f.queuedWork[row]!, f.work[row]!, 0) / cap;
  out[0] = (lnRef * backlog) / H - Math.log(cap);
  out[1] = (lnRef * Math.max(0, f.runningMemory[row]!)) / mem - Math.log(mem);
  out[2] = Math.log(f.pricePerSecond[row]! / f.speed[row]! + 1e-9);
}

/** The axis along which perm[lo, hi) spreads widest (over an even sample of a large range). */
export function widestDim(perm: Int32Array, lo: number, hi: number, coords: Float64Array): number {
  const step = Math.max(1, Math.floor((hi - lo) / 512));
  let best = 0;
  let widest = -1;
  for (let d = 0; d < DIMS; d++) {
    let min = Infinity;
    let max = -Infinity;
    for (let k = lo; k < hi; k += step) {
      const x = coords[perm[k]! * DIMS + d]!;
      if (x < min) min = x;
      if (x > max) max = x;
    }
    if (max - min > widest) {
      widest = max - min;
      best = d;
    }
  }
  return best;
}

/** Reorder perm[lo, hi) so that perm[k] holds the element of that rank along `dim` (ties by row). */
export function select(perm: Int32Array, lo: number, hi: number, k: number, coords: Float64Array, dim: number): void {
  let l = lo;
  let h = hi - 1;
  while (l < h) {
    const pr = perm[(l + h) >> 1]!;
    const pk = coords[pr * DIMS + dim]!;
    let i = l;
    let j = h;
    while (i <= j) {
      for (;;) {
        const r = perm[i]!;
        const x = coords[r * DIMS + dim]!;
        if (x < pk || (x === pk && r < pr)) i++;
        else break;
      }
      for (;;) {
        const r = perm[j]!;
        const x = coords[r * DIMS + dim]!;
        if (pk < x || (x === pk && pr < r)) j--;
        else break;
      }
      if (i <= j) {
        const t = perm[i]!;
        perm[i] = perm[j]!;
        perm[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) h = j;
    else if (k >= i) l = i;
    else return;
  }
}

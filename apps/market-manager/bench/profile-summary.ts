// npx tsx apps/market-manager/bench/profile-summary.ts profiles/CPU....cpuprofile [--top N] [--stalls MS]
//
// Where a bench's --profile says the manager's CPU went: self time by package or source file
// (node_modules/<package>, this repository's files, node internals), then the functions with the
// most self time, then inclusive time of this repository's functions (a function's own time plus
// everything it called). With --stalls MS: every stretch of the thread's busy time (no idle
// sample between) longer than MS, when it started and the repository functions it was spent in:
// the calls that arrived meanwhile waited that long to be read.
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const argv = process.argv.slice(2);
const file = argv.find((a) => !a.startsWith("--"));
if (!file) {
  console.error("usage: profile-summary.ts FILE.cpuprofile [--top N]");
  process.exit(1);
}
const top = Number(argv[argv.indexOf("--top") + 1]) || 25;
const stallMs = argv.includes("--stalls") ? Number(argv[argv.indexOf("--stalls") + 1]) : null;
const p = JSON.parse(readFileSync(file, "utf8")) as Profile;

const self = new Map<number, number>();
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

function place(url: string): string {
  if (!url) return "(native/vm)";
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith("node:")) return url;
  const repo = /\/(apps|packages|test)\/(.*)$/.exec(url);
  return repo ? `${repo[1]}/${repo[2]}` : url;
}
const label = (n: Node) => `${n.callFrame.functionName || "(anonymous)"} ${place(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;

const total = [...self.values()].reduce((a, b) => a + b, 0);
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const byPlace = new Map<string, number>();
const byFunction = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, ms] of self) {
  const n = byId.get(id)!;
  const name = n.callFrame.functionName;
  add(byPlace, name === "(idle)" || name === "(program)" || name === "(garbage collector)" ? name : place(n.callFrame.url), ms);
  add(byFunction, label(n), ms);
  // Inclusive: once per distinct repository function on the stack.
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const f = byId.get(at)!;
    if (!/\/(apps|packages)\//.test(f.callFrame.url) || /node_modules/.test(f.callFrame.url)) continue;
    const l = label(f);
    if (!seen.has(l)) (seen.add(l), add(inclusive, l, ms));
  }
}
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${v.toFixed(0).padStart(8)} ms ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
};
console.log(`${file}: ${(total / 1000).toFixed(1)} s sampled`);
show("self time by package or file", byPlace);
show("self time by function", byFunction);
show("inclusive time, this repository's functions", inclusive);

if (stallMs !== null) {
  // Consecutive samples that are not (idle): one run of the event loop without a wait for I/O.
  const stretches: { at: number; ms: number; samples: number[] }[] = [];
  let t = 0;
  let open: { at: number; ms: number; samples: number[] } | null = null;
  for (let i = 0; i < p.samples.length; i++) {
    t += (p.timeDeltas[i] ?? 0) / 1000;
    const idle = byId.get(p.samples[i]!)!.callFrame.functionName === "(idle)";
    if (idle) {
      if (open && open.ms > stallMs) stretches.push(open);
      open = null;
      continue;
    }
    open ??= { at: t, ms: 0, samples: [] };
    open.ms += (p.timeDeltas[i + 1] ?? 0) / 1000;
    open.samples.push(p.samples[i]!);
  }
  if (open && open.ms > stallMs) stretches.push(open);
  console.log(`\nbusy stretches over ${stallMs} ms: ${stretches.length}`);
  for (const s of stretches) {
    const where = new Map<string, number>();
    for (const id of s.samples) {
      const seen = new Set<string>();
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const f = byId.get(at)!;
        if (!/\/(apps|packages)\//.test(f.callFrame.url) || /node_modules/.test(f.callFrame.url)) continue;
        const l = label(f);
        if (!seen.has(l)) (seen.add(l), add(where, l, 1));
      }
      const n = byId.get(id)!;
      if (n.callFrame.functionName === "(garbage collector)") add(where, "(garbage collector)", 1);
    }
    const leaves = new Map<string, number>();
    for (const id of s.samples) add(leaves, label(byId.get(id)!), 1);
    const selfParts = [...leaves].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([k, v]) => `${k} ${Math.round((100 * v) / s.samples.length)}%`);
    const parts = [...where].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([k, v]) => `${k} ${Math.round((100 * v) / s.samples.length)}%`);
    // Few samples in a long stretch: the thread was not running (the machine's other work), not busy.
    console.log(`${s.ms.toFixed(0).padStart(6)} ms at +${(s.at / 1000).toFixed(2)} s (${s.samples.length} samples): ${parts.join("; ") || "(no repository code)"}\n           self: ${selfParts.join("; ")}`);
  }
}

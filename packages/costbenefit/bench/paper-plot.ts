// npm run -s bench:policies -- --workload tpds2000 --profile paper --runs 3000 --seed 1 --also ... --json \
//   | npx tsx packages/costbenefit/bench/paper-plot.ts [--profile stated|calibrated] > packages/costbenefit/docs/paper-pyramid.svg
// Slowdown by job against the runs' offered load, per load band of equal run counts, for the
// paper's four algorithms and the market's policies: the paper's "pyramid effect" (the gain of the
// cost-benefit policies grows with load).
import { readFileSync } from "node:fs";

interface Band { meanLoad: number; runs: number; slowdownByJob: Record<string, number | null> }
// --profile stated|calibrated picks which of the bench's profiles to draw (calibrated by default).
const which = process.argv.includes("--profile") ? process.argv[process.argv.indexOf("--profile") + 1]! : "calibrated";
const data = JSON.parse(readFileSync(0, "utf8")) as { runs: number; seed: number; profiles: Record<string, { loadBands: Band[] }> };
const picked = data.profiles[which];
if (!picked) throw new Error(`--profile: the bench output has no ${which} profile`);
const bands = picked.loadBands;
const names = Object.keys(bands[0]!.slowdownByJob);
const colors: Record<string, string> = { pvm: "#b2182b", "e-pvm": "#ef8a62", mosix: "#2166ac", "e-mosix": "#67a9cf" };
const extra = ["#1b7837", "#762a83", "#e08214", "#35978f"];
const colorOf = (n: string, i: number): string => colors[n] ?? extra[i % extra.length]!;
const W = 680, H = 400, L = 60, R = 150, T = 34, B = 50;
const xs = bands.map((b) => b.meanLoad);
const ys = bands.flatMap((b) => names.map((n) => b.slowdownByJob[n] ?? NaN)).filter(Number.isFinite);
const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
// Log scale: round robin's slowdown grows much faster than the others' at high load.
const [l0, l1] = [Math.log10(Math.min(1, ...ys)), Math.log10(Math.max(...ys)) + 0.05];
const px = (x: number): number => L + ((x - x0) / Math.max(1e-9, x1 - x0)) * (W - L - R);
const py = (y: number): number => T + (1 - (Math.log10(y) - l0) / (l1 - l0)) * (H - T - B);
const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`];
out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
out.push(`<text x="${L}" y="20" font-size="14">Slowdown by job vs offered load, ${which} profile: ${data.runs} runs, seed ${data.seed}</text>`);
out.push(`<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#333"/><line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#333"/>`);
for (let e = Math.ceil(l0); e <= Math.floor(l1); e++) {
  for (const k of [1, 2, 5]) {
    const y = k * 10 ** e;
    if (Math.log10(y) < l0 || Math.log10(y) > l1) continue;
    out.push(`<line x1="${L}" y1="${py(y)}" x2="${W - R}" y2="${py(y)}" stroke="#eee"/><text x="${L - 6}" y="${py(y) + 4}" text-anchor="end">${y}</text>`);
  }
}
for (let i = 0; i <= 5; i++) {
  const x = x0 + ((x1 - x0) * i) / 5;
  out.push(`<text x="${px(x)}" y="${H - B + 18}" text-anchor="middle">${x.toFixed(3)}</text>`);
}
out.push(`<text x="${(L + W - R) / 2}" y="${H - 10}" text-anchor="middle">offered load (CPU work arriving / cluster capacity), mean of each band of ${bands[0]!.runs} runs</text>`);
names.forEach((n, i) => {
  const c = colorOf(n, i);
  const pts = bands.filter((b) => b.slowdownByJob[n] != null).map((b) => `${px(b.meanLoad).toFixed(1)},${py(b.slowdownByJob[n]!).toFixed(1)}`).join(" ");
  out.push(`<polyline fill="none" stroke="${c}" stroke-width="2"${n.startsWith("market ") ? ` stroke-dasharray="6 3"` : ""} points="${pts}"/>`);
  out.push(`<text x="${W - R + 10}" y="${T + 16 * (i + 1)}" fill="${c}">${n}</text>`);
});
out.push("</svg>");
console.log(out.join("\n"));

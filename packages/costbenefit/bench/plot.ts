// npx tsx packages/costbenefit/bench/plot.ts < benefit.json > packages/costbenefit/docs/benefit-profit.svg
// Renders the market profit per load level from `bench:benefit --json` as a small SVG line chart.
import { readFileSync } from "node:fs";

interface Level { load: number; policies: Record<string, { marketProfit: number }> }
const data = JSON.parse(readFileSync(0, "utf8")) as { runs: number; seed: number; levels: Level[] };
const names = Object.keys(data.levels[0]!.policies);
const colors = ["#1b7837", "#c51b7d", "#2166ac", "#e08214", "#542788"];
const W = 640, Hh = 360, L = 70, R = 120, T = 30, B = 50;
const xs = data.levels.map((l) => l.load);
const ys = data.levels.flatMap((l) => names.map((n) => l.policies[n]!.marketProfit));
const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
const [y0, y1] = [Math.min(0, ...ys), Math.max(...ys)];
const px = (x: number) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
const py = (y: number) => T + (1 - (y - y0) / (y1 - y0)) * (Hh - T - B);
const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${Hh}" font-family="sans-serif" font-size="12">`];
out.push(`<text x="${L}" y="18" font-size="14">Market profit per run (credits) vs offered load: ${data.runs} runs, seed ${data.seed}</text>`);
out.push(`<line x1="${L}" y1="${py(0)}" x2="${W - R}" y2="${py(0)}" stroke="#999" stroke-dasharray="4 3"/>`);
out.push(`<line x1="${L}" y1="${T}" x2="${L}" y2="${Hh - B}" stroke="#333"/><line x1="${L}" y1="${Hh - B}" x2="${W - R}" y2="${Hh - B}" stroke="#333"/>`);
for (const x of xs) out.push(`<text x="${px(x)}" y="${Hh - B + 18}" text-anchor="middle">${x}x</text>`);
for (let i = 0; i <= 4; i++) {
  const y = y0 + ((y1 - y0) * i) / 4;
  out.push(`<text x="${L - 6}" y="${py(y) + 4}" text-anchor="end">${Math.round(y)}</text>`);
}
out.push(`<text x="${(L + W - R) / 2}" y="${Hh - 10}" text-anchor="middle">offered load (work arriving / cluster capacity)</text>`);
names.forEach((n, i) => {
  const pts = data.levels.map((l) => `${px(l.load).toFixed(1)},${py(l.policies[n]!.marketProfit).toFixed(1)}`).join(" ");
  out.push(`<polyline fill="none" stroke="${colors[i % colors.length]}" stroke-width="2" points="${pts}"/>`);
  out.push(`<text x="${W - R + 10}" y="${T + 16 * (i + 1)}" fill="${colors[i % colors.length]}">${n}</text>`);
});
out.push("</svg>");
console.log(out.join("\n"));

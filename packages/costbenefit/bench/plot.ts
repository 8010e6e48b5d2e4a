// npm run -s bench:benefit -- --json > benefit.json
// npx tsx packages/costbenefit/bench/plot.ts < benefit.json > packages/costbenefit/docs/benefit-pricing.svg
// Two panels from `bench:benefit --json`: welfare (benefit delivered minus producer payments) and
// consumer surplus per load level; solid lines posted prices, dashed lines pay-as-bid.
import { readFileSync } from "node:fs";

type Row = { welfare: number; consumerSurplus: number };
interface Level { load: number; pricing: Record<"posted" | "bid", Record<string, Row>> }
const data = JSON.parse(readFileSync(0, "utf8")) as { runs: number; seed: number; levels: Level[] };
const names = Object.keys(data.levels[0]!.pricing.posted);
const colors = ["#1b7837", "#c51b7d", "#2166ac", "#e08214", "#542788", "#8c510a", "#01665e", "#b2182b"];
const PW = 380, Hh = 360, L = 70, T = 40, B = 50, GAP = 40, LEGEND = 150;
const W = 2 * PW + GAP + LEGEND;
const xs = data.levels.map((l) => l.load);
const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${Hh}" font-family="sans-serif" font-size="12">`];
out.push(`<rect width="${W}" height="${Hh}" fill="white"/>`);
out.push(`<text x="${L}" y="18" font-size="14">Benefit workload, means per run (credits): ${data.runs} runs, seed ${data.seed}. Solid: posted prices; dashed: pay-as-bid</text>`);

function panel(left: number, metric: keyof Row, title: string): void {
  const ys = data.levels.flatMap((l) => names.flatMap((n) => [l.pricing.posted[n]![metric], l.pricing.bid[n]![metric]]));
  // The admit-all baselines lose far more than anyone earns under overload; clip them at minus
  // the best figure so the policies that earn stay readable.
  const y1 = Math.max(...ys);
  const y0 = Math.max(Math.min(0, ...ys), -y1);
  const right = left + PW - 20;
  const px = (x: number) => left + L + ((x - x0) / (x1 - x0)) * (right - left - L);
  const py = (y: number) => T + (1 - (y - y0) / (y1 - y0)) * (Hh - T - B);
  out.push(`<text x="${left + L}" y="${T - 8}" font-weight="bold">${title}</text>`);
  out.push(`<clipPath id="clip-${metric}"><rect x="${left + L}" y="${T}" width="${right - left - L}" height="${Hh - T - B}"/></clipPath>`);
  out.push(`<line x1="${left + L}" y1="${py(0)}" x2="${right}" y2="${py(0)}" stroke="#999" stroke-dasharray="4 3"/>`);
  out.push(`<line x1="${left + L}" y1="${T}" x2="${left + L}" y2="${Hh - B}" stroke="#333"/><line x1="${left + L}" y1="${Hh - B}" x2="${right}" y2="${Hh - B}" stroke="#333"/>`);
  for (const x of xs) out.push(`<text x="${px(x)}" y="${Hh - B + 18}" text-anchor="middle">${x}x</text>`);
  for (let i = 0; i <= 4; i++) {
    const y = y0 + ((y1 - y0) * i) / 4;
    out.push(`<text x="${left + L - 6}" y="${py(y) + 4}" text-anchor="end">${Math.round(y)}</text>`);
  }
  out.push(`<text x="${(left + L + right) / 2}" y="${Hh - 10}" text-anchor="middle">offered load</text>`);
  names.forEach((n, i) => {
    for (const p of ["posted", "bid"] as const) {
      const pts = data.levels.map((l) => `${px(l.load).toFixed(1)},${py(l.pricing[p][n]![metric]).toFixed(1)}`).join(" ");
      const dash = p === "bid" ? ` stroke-dasharray="6 4"` : "";
      out.push(`<polyline clip-path="url(#clip-${metric})" fill="none" stroke="${colors[i % colors.length]}" stroke-width="${n === "miserly" ? 3 : 1.5}"${dash} points="${pts}"/>`);
    }
  });
}

panel(0, "welfare", "Welfare (benefit delivered - producer payments)");
panel(PW + GAP, "consumerSurplus", "Consumer surplus (benefit - charge)");
names.forEach((n, i) => out.push(`<text x="${2 * PW + GAP + 10}" y="${T + 16 * (i + 1)}" fill="${colors[i % colors.length]}">${n}</text>`));
out.push("</svg>");
console.log(out.join("\n"));

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * Tick labels of a time axis (seconds since the epoch, shown in local time), each on one line:
 * "11:55:30am" when ticks are seconds apart, "11:55am" when minutes or hours, "Nov 29" at
 * midnight and when days apart. uPlot's own labels add a second line with the whole date under
 * the first tick, which the next tick's label overlaps on a narrow chart.
 */
export function timeTicks(ticks: number[]): string[] {
  const step = ticks.length > 1 ? Math.abs(ticks[1]! - ticks[0]!) : 60;
  return ticks.map((t) => {
    const d = new Date(t * 1000);
    if (step >= 86_400 || (d.getHours() === 0 && d.getMinutes() === 0 && d.getSeconds() === 0)) return `${MONTHS[d.getMonth()]} ${d.getDate()}`;
    const clock = `${d.getHours() % 12 || 12}:${String(d.getMinutes()).padStart(2, "0")}`;
    const seconds = step < 60 ? `:${String(d.getSeconds()).padStart(2, "0")}` : "";
    return `${clock}${seconds}${d.getHours() < 12 ? "am" : "pm"}`;
  });
}

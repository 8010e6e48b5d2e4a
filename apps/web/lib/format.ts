// Numbers as people read them. Credits arrive as plain numbers for display (the exact integer
// amounts stay in the ledger).

export function credits(value: number | null | undefined): string {
  if (value == null || !Number.isFinite(value)) return "—";
  return `${creditAmount(value)} cr`;
}

/**
 * A number of credits without the unit, for sentences ("Charged 12.5 credits"): to 3 decimals
 * everywhere, and to 2 significant digits only where 3 decimals would read 0 (a payment of 0.00042).
 */
export function creditAmount(value: number | null | undefined): string {
  if (value == null || !Number.isFinite(value)) return "—";
  if (value !== 0 && Math.abs(value) < 0.0005) return value.toLocaleString("en-US", { maximumSignificantDigits: 2 });
  return value.toLocaleString("en-US", { maximumFractionDigits: 3 });
}

export function seconds(value: number | null | undefined): string {
  if (value == null || !Number.isFinite(value)) return "—";
  if (value < 1) return `${Math.round(value * 1000)} ms`;
  if (value < 120) return `${value.toLocaleString("en-US", { maximumFractionDigits: 1 })} s`;
  if (value < 7200) return `${(value / 60).toLocaleString("en-US", { maximumFractionDigits: 1 })} min`;
  if (value < 172_800) return `${(value / 3600).toLocaleString("en-US", { maximumFractionDigits: 1 })} h`;
  return `${(value / 86_400).toLocaleString("en-US", { maximumFractionDigits: 1 })} days`;
}

export function number(value: number | null | undefined, digits = 2): string {
  if (value == null || !Number.isFinite(value)) return "—";
  return value.toLocaleString("en-US", { maximumFractionDigits: digits });
}

/** A point in time: ISO strings from the API, or epoch milliseconds from the engine. */
export function time(value: Date | string | number | null | undefined): string {
  if (value == null) return "—";
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return "—";
  return d.toLocaleTimeString("en-US", { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function dateTime(value: Date | string | number | null | undefined): string {
  if (value == null) return "—";
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return "—";
  return d.toLocaleString("en-US", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** "in 12 s", "3 min ago": how far a time is from now. */
export function relative(value: Date | string | number | null | undefined, now = Date.now()): string {
  if (value == null) return "—";
  const at = new Date(value).getTime();
  if (Number.isNaN(at)) return "—";
  const diff = (at - now) / 1000;
  // Work that takes a fraction of a second is "within a second", not "now" (it has not happened).
  if (Math.abs(diff) < 1) return diff >= 0 ? "within a second" : "just now";
  return diff > 0 ? `in ${seconds(diff)}` : `${seconds(-diff)} ago`;
}

export function bytes(value: number | null | undefined): string {
  if (value == null || !Number.isFinite(value)) return "—";
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}

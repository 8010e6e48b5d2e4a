import type { Market, MarketEvent } from "../../market/market.ts";

export interface ChangeOptions {
  /** Wake at least this often even when nothing was emitted, for views that show elapsed time. */
  everyMs?: number;
  /** At least this long between two wake-ups, so a busy market does not rebuild a costly view per event. */
  minGapMs?: number;
  /** Hears only the events routed to it (a machine's work stream); default: every market event. */
  listen?: (mark: () => void) => () => void;
  /** Only events this accepts wake the stream (one job's stream needs only that job's events). */
  only?: (event: MarketEvent) => boolean;
  /** A wake-up that cannot wait for the rest of its burst (leases made for a worker's stream). */
  urgent?: () => boolean;
}

/**
 * One stream's view of the live market's changes: a wake-up at the start, then one per burst of
 * events of any kind (the views pushed depend on all of them). A stream that is slow to send gets
 * one wake-up for many events, never a backlog. Its one listener (on `market.events`, or its route) goes when the
 * request's signal aborts (the client went away, cleanly or not) or when the stream itself ends.
 */
export async function* changes(market: Market, signal: AbortSignal | undefined, options: ChangeOptions = {}): AsyncGenerator<void> {
  let dirty = true;
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const mark = () => {
    dirty = true;
    poke();
  };
  const only = options.only;
  const onEvent = only
    ? (event: MarketEvent) => {
        if (only(event)) mark();
      }
    : mark;
  const paused = { end: () => {} };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      paused.end = () => (clearTimeout(timer), resolve());
    });
  const onAbort = () => {
    poke();
    paused.end();
  };
  const unlisten = options.listen ? options.listen(mark) : (market.events.on("event", onEvent), () => void market.events.off("event", onEvent));
  signal?.addEventListener("abort", onAbort);
  const timer = options.everyMs ? setInterval(mark, options.everyMs) : undefined;
  try {
    while (!signal?.aborted) {
      if (!dirty) await new Promise<void>((resolve) => (wake = resolve));
      if (signal?.aborted) return;
      // Events of one step come together: let the rest of the burst land first.
      if (!options.urgent?.()) await new Promise((resolve) => setImmediate(resolve));
      dirty = false;
      yield;
      // Events during the pause only mark the view dirty; an abort ends the pause at once.
      if (options.minGapMs && !signal?.aborted) await pause(options.minGapMs);
    }
  } finally {
    paused.end();
    clearInterval(timer);
    unlisten();
    signal?.removeEventListener("abort", onAbort);
  }
}

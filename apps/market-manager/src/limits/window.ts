/**
 * Calls per key in a fixed window, in memory: the quotas guard one Market Manager process, and a
 * restart forgives. Returns null when the call may go ahead, else the seconds until it may.
 */
export function windowCounter(max: number, windowMs: number, now: () => number) {
  const windows = new Map<string, { start: number; count: number }>();
  return (key: string): number | null => {
    const t = now();
    // Old windows are dropped now and then so the map stays small.
    if (windows.size > 10_000) for (const [k, w] of windows) if (t - w.start >= windowMs) windows.delete(k);
    const w = windows.get(key);
    if (!w || t - w.start >= windowMs) {
      windows.set(key, { start: t, count: 1 });
      return null;
    }
    if (w.count >= max) return Math.max(1, Math.ceil((w.start + windowMs - t) / 1000));
    w.count += 1;
    return null;
  };
}

/** Things held open at once per key (streams): `take` refuses past `max`, the release gives one back. */
export function openCounter(max: number) {
  const open = new Map<string, number>();
  return {
    take(key: string): (() => void) | null {
      const n = open.get(key) ?? 0;
      if (n >= max) return null;
      open.set(key, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(key) ?? 1) - 1;
        if (left <= 0) open.delete(key);
        else open.set(key, left);
      };
    },
    count: (key: string) => open.get(key) ?? 0,
  };
}

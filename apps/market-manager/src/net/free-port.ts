import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * A port someone else holds. The message names the port and the variable that moves ours, so a
 * user reads what to do; a test's launcher reads `port` and tries another.
 */
export class PortTakenError extends Error {
  readonly code = "port-taken";
  constructor(
    readonly port: number,
    readonly variable: string,
  ) {
    super(`Port ${port} is taken by another program; set ${variable} to a free port.`);
  }
}

export const isAddressInUse = (e: unknown) => (e as NodeJS.ErrnoException | null)?.code === "EADDRINUSE";

/**
 * The ports the kernel hands to outgoing connections and to `listen(0)`. A port picked there and
 * released can be taken by any connection opened before the server binds it, which on a busy
 * machine happens; ports below this range are never taken that way.
 */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // no /proc: the range the other common systems use
  }
  return [49152, 65535];
}

const LOWEST = 10_000;

/** True when nobody holds `port` on `host` (every interface when none; a wildcard listener counts either way). */
export function portIsFree(port: number, host?: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (e) => (isAddressInUse(e) || (e as NodeJS.ErrnoException).code === "EACCES" ? resolve(false) : reject(e)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * A free port for a server we start ourselves, chosen at random below the ephemeral range so
 * that no outgoing connection can take it between this check and the server's bind. Another
 * program binding the same port on purpose still can: callers retry with another (PortTakenError).
 */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  const [low] = ephemeralRange();
  const high = low - 1;
  if (high - LOWEST >= 1000) {
    for (let i = 0; i < 50; i++) {
      const port = LOWEST + Math.floor(Math.random() * (high - LOWEST + 1));
      if (await portIsFree(port, host)) return port;
    }
  }
  // No room below the ephemeral range (an unusual setting): let the kernel pick.
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A server's start retried on other free ports, a bounded number of times, while its port is taken. */
export async function onFreePort<T>(start: (port: number) => Promise<T>, opts: { first?: number; attempts?: number; log?: (line: string) => void } = {}): Promise<T> {
  const attempts = opts.attempts ?? 5;
  let port = opts.first ?? (await freePort());
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(port);
    } catch (e) {
      if (!(e instanceof PortTakenError) || attempt >= attempts) throw e;
      const next = await freePort();
      opts.log?.(`port ${port} was taken; trying ${next}`);
      port = next;
    }
  }
}

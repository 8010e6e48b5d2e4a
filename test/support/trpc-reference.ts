import http from "node:http";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { trpcHandler } from "../../apps/market-manager/src/http/server.ts";
import type { Services } from "../../apps/market-manager/src/services.ts";

/**
 * A server of tRPC's HTTP handler alone over a running market's services: the answer tRPC itself
 * gives to a call the market's own server answers beside it (its quick and direct routes), to
 * compare the two byte for byte. Each request gets its id as the market's server gives one.
 */
export async function startTrpcReference(services: Services): Promise<{ url: string; close(): Promise<void> }> {
  const ids = new WeakMap<http.IncomingMessage, string>();
  const handler = trpcHandler(services, (req) => ids.get(req));
  const server = http.createServer((req, res) => {
    const id = randomUUID();
    ids.set(req, id);
    res.setHeader("x-request-id", id);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// The web app's HTTP server: Next.js's own request handler, after the one step Next.js leaves to
// its host, saying who the client is. Next.js keeps an X-Forwarded-For a client sent (it fills one
// in only when there is none), and the route that forwards /api to the Market Manager
// (app/api/[...path]/route.ts) never sees the socket; here the socket is known, so the forwarded
// headers are written from what this server saw before Next.js reads the request: the peer's
// address, appended to the chain only when the peer is one of TRUSTED_PROXIES (a TLS proxy).
//
//   node --import tsx server.ts [-p 3000] [-H 127.0.0.1] [--dev]
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import next from "next";
import { proxySet, setForwardedHeaders } from "@cyclemarket/market-manager/client-address";
import { FORWARDED_BY_SERVER } from "./lib/forwarded.ts";

const { values } = parseArgs({
  options: { port: { type: "string", short: "p" }, hostname: { type: "string", short: "H" }, dev: { type: "boolean", default: false } },
});
const port = Number(values.port ?? process.env.PORT ?? 3000);
const hostname = values.hostname;
const dev = values.dev ?? false;
const env = process.env as Record<string, string | undefined>;
env.NODE_ENV ??= dev ? "development" : "production";
const proxies = proxySet((process.env.TRUSTED_PROXIES ?? "").split(","));

const started = performance.now();
const app = next({ dev, dir: import.meta.dirname, hostname: hostname ?? "localhost", port });
const handle = app.getRequestHandler();
await app.prepare();
// The /api route forwards X-Forwarded-For only when this server wrote it (lib/forwarded.ts).
(globalThis as Record<symbol, unknown>)[FORWARDED_BY_SERVER] = true;

const server = createServer((req, res) => {
  setForwardedHeaders(req.headers, req.socket.remoteAddress ?? "unknown", "encrypted" in req.socket && req.socket.encrypted === true, proxies);
  void handle(req, res);
});
server.once("error", (e) => {
  // The launcher reads EADDRINUSE from this line to move the web app to another port.
  console.error(`the web app could not listen on ${port}: ${e.message}`);
  process.exit(1);
});
server.listen(port, hostname, () => {
  console.log(`Ready in ${Math.round(performance.now() - started)}ms on http://${hostname ?? "localhost"}:${port}`);
});

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    server.close();
    void app.close().finally(() => process.exit(0));
  });
}

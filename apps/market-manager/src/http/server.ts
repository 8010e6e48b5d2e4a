import http from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { toNodeHandler } from "better-auth/node";
import type { Services } from "../services.ts";
import { appRouter } from "../api/router.ts";
import { createContext } from "../api/trpc.ts";

// Module uploads travel as base64 in JSON: the configured limit, a third for encoding, some slack.
const bodyLimit = (maxModuleBytes: number) => Math.ceil(maxModuleBytes * 1.4) + 2 * 1024 * 1024;

/** One HTTP server: Better Auth under /api/auth, the tRPC API under /api/trpc. */
export function createServer(services: Services) {
  const auth = toNodeHandler(services.auth);
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: "/api/trpc/",
    maxBodySize: bodyLimit(services.config.MAX_MODULE_BYTES),
    createContext: ({ req }) => createContext(services, req.headers),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") services.log(`error in ${path ?? "?"}: ${error.stack ?? error.message}`);
    },
  });
  return http.createServer((req, res) => {
    const url = req.url ?? "/";
    if (url.startsWith("/api/auth/")) return void auth(req, res);
    if (url.startsWith("/api/trpc/")) return trpc(req, res);
    if (url === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ ok: true, machines: services.market.state.machines.size }));
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: "not found" }));
  });
}

import http from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { toNodeHandler } from "better-auth/node";
import type { Services } from "../services.ts";
import { appRouter } from "../api/router.ts";
import { createContext } from "../api/trpc.ts";
import { clientAddress, signupLimiter } from "./signup-limit.ts";

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
  const cfg = services.config;
  const signups = signupLimiter(
    { perAddress: cfg.SIGNUPS_PER_ADDRESS, perNetwork: cfg.SIGNUPS_PER_NETWORK, windowMs: cfg.SIGNUP_WINDOW_MINUTES * 60_000 },
    () => services.clock.now(),
  );
  return http.createServer((req, res) => {
    const url = req.url ?? "/";
    if (req.method === "POST" && url.startsWith("/api/auth/sign-up/")) {
      const refused = signups.check(clientAddress(req));
      if (refused) {
        res.writeHead(429, { "content-type": "application/json", "retry-after": String(refused.retryAfterSeconds) });
        const who = refused.scope === "address" ? "this address" : "this network";
        return void res.end(
          JSON.stringify({
            code: "TOO_MANY_SIGNUPS",
            message: `Too many sign-ups from ${who}: at most ${refused.limit} every ${refused.windowMinutes} minutes. Try again in ${Math.ceil(refused.retryAfterSeconds / 60)} minutes.`,
            reason: refused,
          }),
        );
      }
    }
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

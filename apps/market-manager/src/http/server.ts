import http from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { toNodeHandler } from "better-auth/node";
import type { Services } from "../services.ts";
import { appRouter } from "../api/router.ts";
import { createContext } from "../api/trpc.ts";
import { clientAddress, signupLimiter } from "./signup-limit.ts";
import { JOB_LIMITS } from "@cyclemarket/client/job-file";
import { uploadModule } from "./modules.ts";
import { download, isDownload } from "./downloads.ts";
import { sendRefusal } from "./respond.ts";

/**
 * The largest tRPC request: a job's stdin and input files in base64 (a third more than their
 * bytes) or, from the simple form, a module in base64; plus room for arguments and names.
 */
const bodyLimit = (maxModuleBytes: number) => Math.ceil(Math.max(maxModuleBytes, JOB_LIMITS.inputBytesPerJob) * 1.4) + 4 * 1024 * 1024;

/** One HTTP server: Better Auth under /api/auth, the tRPC API under /api/trpc. */
export function createServer(services: Services) {
  const auth = toNodeHandler(services.auth);
  const maxBody = bodyLimit(services.config.MAX_MODULE_BYTES);
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: "/api/trpc/",
    maxBodySize: maxBody,
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
    if (url.startsWith("/api/trpc/")) {
      // Refused before reading, with the limit in the answer rather than a bare 413.
      const declared = Number(req.headers["content-length"] ?? 0);
      if (declared > maxBody) return sendRefusal(res, "PAYLOAD_TOO_LARGE", { code: "request-too-large", bytes: declared, maxBytes: maxBody }, `The request is over ${maxBody} bytes.`);
      return trpc(req, res);
    }
    const path = url.split("?")[0]!;
    if (path === "/api/modules" && (req.method === "PUT" || req.method === "POST")) return void uploadModule(services, req, res);
    if (req.method === "GET" && isDownload(path)) return void download(services, req, res);
    if (url === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ ok: true, machines: services.market.state.machines.size }));
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: "not found" }));
  });
}

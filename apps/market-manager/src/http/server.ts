import http from "node:http";
import { randomUUID } from "node:crypto";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import type { Services } from "../services.ts";
import { appRouter } from "../api/router.ts";
import { createContext } from "../api/trpc.ts";
import { signupLimiter } from "./signup-limit.ts";
import { clientAddress, clientNetwork, managerProxies } from "./client-address.ts";
import { authRoute } from "./auth-route.ts";
import { refuseHttp, sendRefusal } from "./respond.ts";
import { JOB_LIMITS } from "@cyclemarket/client/job-file";
import { uploadModule } from "./modules.ts";
import { download, isDownload } from "./downloads.ts";
import { isPackageDownload, servePackage } from "./package-downloads.ts";
import { opsRoute } from "./ops-routes.ts";
import { heldBodyOf, holdOffThreadBody } from "./held-body.ts";
import { intakePoolOf } from "../tasks/intake-pool.ts";
import { quickWorkerRoute } from "./quick-worker-route.ts";
import { submitRoute } from "./submit-route.ts";
import { queryRoute } from "./query-route.ts";
import { workStreamRoute } from "./work-stream-route.ts";
import { logApiError, retryHeaders } from "./trpc-direct.ts";

/**
 * The largest tRPC request: a job's stdin and input files in base64 (a third more than their
 * bytes) or, from the simple form, a module in base64; plus room for arguments and names.
 */
export const trpcBodyLimit = (maxModuleBytes: number) => Math.ceil(Math.max(maxModuleBytes, JOB_LIMITS.inputBytesPerJob) * 1.4) + 4 * 1024 * 1024;

/** Calls named in one tRPC request: `a,b,c` in the path when batched. */
const callsIn = (url: URL) => (url.searchParams.get("batch") === "1" ? decodeURIComponent(url.pathname.slice("/api/trpc/".length)).split(",").length : 1);

/**
 * The tRPC API's HTTP handler: every call the routes beside it (quick-worker-route.ts,
 * submit-route.ts, query-route.ts, work-stream-route.ts) do not answer themselves, and the reference their
 * answers are compared with byte for byte (test/integration/direct-routes.test.ts).
 */
export function trpcHandler(services: Services, requestIdOf: (req: http.IncomingMessage) => string | undefined) {
  const cfg = services.config;
  const proxies = managerProxies(cfg.TRUSTED_PROXIES);
  return createHTTPHandler({
    router: appRouter,
    basePath: "/api/trpc/",
    maxBodySize: trpcBodyLimit(cfg.MAX_MODULE_BYTES),
    createContext: async ({ req }) => ({
      ...(await createContext(services, req.headers, requestIdOf(req) ?? randomUUID())),
      heldBody: heldBodyOf(req),
      network: clientNetwork(req, proxies),
    }),
    // A refusal for a limit says when to retry in the header clients and proxies know.
    responseMeta: ({ errors }) => ({ headers: retryHeaders(errors) }),
    onError: ({ error, path, ctx }) => logApiError(services, error, path, ctx?.requestId),
  });
}

/** One HTTP server: Better Auth under /api/auth, the tRPC API under /api/trpc, the worker's and client's packages under /downloads. */
export function createServer(services: Services) {
  const cfg = services.config;
  const requestIds = new WeakMap<http.IncomingMessage, string>();
  const auth = authRoute(services);
  const trpc = trpcHandler(services, (req) => requestIds.get(req));
  const proxies = managerProxies(cfg.TRUSTED_PROXIES);
  const signups = signupLimiter(
    { perAddress: cfg.SIGNUPS_PER_ADDRESS, perNetwork: cfg.SIGNUPS_PER_NETWORK, windowMs: cfg.SIGNUP_WINDOW_MINUTES * 60_000 },
    () => services.clock.now(),
  );
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, requestId: string) => {
    const url = req.url ?? "/";
    if (req.method === "POST" && url.startsWith("/api/auth/sign-up/")) {
      const refused = signups.check(clientAddress(req, proxies));
      if (refused) {
        const who = refused.scope === "address" ? "this address" : "this network";
        return refuseHttp(
          res,
          429,
          {
            code: "TOO_MANY_SIGNUPS",
            message: `Too many sign-ups from ${who}: at most ${refused.limit} every ${refused.windowMinutes} minutes. Try again in ${Math.ceil(refused.retryAfterSeconds / 60)} minutes.`,
            reason: refused,
          },
          requestId,
        );
      }
    }
    if (url.startsWith("/api/auth/")) return auth(req, res, requestId);
    if (url.startsWith("/api/trpc/")) {
      const calls = callsIn(new URL(url, "http://market.invalid"));
      if (calls > cfg.API_MAX_BATCH_CALLS) {
        return refuseHttp(
          res,
          400,
          {
            code: "BAD_REQUEST",
            message: `One request may carry at most ${cfg.API_MAX_BATCH_CALLS} calls; this one has ${calls}.`,
            reason: { code: "batch-too-large", limit: "calls-per-batch", max: cfg.API_MAX_BATCH_CALLS, calls },
          },
          requestId,
        );
      }
      // Refused before reading, with the limit in the answer rather than a bare 413.
      const declared = Number(req.headers["content-length"] ?? 0);
      const maxBody = trpcBodyLimit(cfg.MAX_MODULE_BYTES);
      if (declared > maxBody) return sendRefusal(res, "PAYLOAD_TOO_LARGE", { code: "request-too-large", bytes: declared, maxBytes: maxBody }, `The request is over ${maxBody} bytes.`);
      requestIds.set(req, requestId);
      res.setHeader("x-request-id", requestId);
      if (quickWorkerRoute(services, req, res, trpc, requestId)) return;
      if (submitRoute(services, req, res, trpc, requestId) || queryRoute(services, req, res, trpc, requestId) || workStreamRoute(services, req, res, trpc, requestId)) return;
      if (!(await holdOffThreadBody(req, res, new URL(url, "http://market.invalid"), maxBody, () => intakePoolOf(services.market).warm()))) return;
      return trpc(req, res);
    }
    const path = url.split("?")[0]!;
    if (path === "/api/modules" && (req.method === "PUT" || req.method === "POST")) return void uploadModule(services, req, res);
    if (req.method === "GET" && isDownload(path)) return void download(services, req, res);
    if ((req.method === "GET" || req.method === "HEAD") && isPackageDownload(path)) return servePackage(req, res, path);
    if (await opsRoute(services, req, res, path)) return;
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ code: "NOT_FOUND", message: "Not found." }));
  };
  const server = http.createServer((req, res) => {
    const requestId = randomUUID();
    const started = performance.now();
    res.once("finish", () =>
      services.log("request", { level: "debug", requestId, method: req.method, path: req.url?.split("?")[0], status: res.statusCode, ms: Math.round(performance.now() - started) }),
    );
    handle(req, res, requestId).catch((e: unknown) => {
      services.log(`error on ${req.method} ${req.url}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`, { level: "error", requestId });
      if (res.headersSent) return void res.destroy();
      refuseHttp(res, 500, { code: "INTERNAL_SERVER_ERROR", message: `The market could not complete this request (request ${requestId}).`, reason: { code: "internal-error", requestId } }, requestId);
    });
  });
  // Workers call every few seconds (a heartbeat each 10 s, leases and reports between) and keep
  // their connections (the Node worker's keep-alive agent, browsers). A connection idle for
  // Node's default 5 s was closed between two calls of the same machine, so a fleet opened
  // connections by the hundred a second, and a busy Node server accepts one new connection per
  // turn of its event loop: they waited in the listen queue for seconds while calls on kept
  // connections took milliseconds (bench:load shows it with 1,000 machines). Clients read the
  // timeout from the Keep-Alive header and close first.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 1_000;
  return server;
}

/** How long the market keeps an idle connection: longer than a worker's calls are apart. */
export const KEEP_ALIVE_MS = 65_000;
/** Connections waiting to be accepted (the kernel caps it at net.core.somaxconn): Node's default is 511. */
export const LISTEN_BACKLOG = 4096;

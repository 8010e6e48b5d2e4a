import type { IncomingMessage, ServerResponse } from "node:http";
import type { Services } from "../services.ts";
import { BodyTooLarge, readBody } from "./body.ts";
import { checkAuthBody } from "./auth-body.ts";
import { refuseHttp } from "./respond.ts";
import { authRuleFor } from "../auth/auth-limits.ts";
import { clientAddress, managerProxies, overHttps } from "./client-address.ts";

/** The header the auth library reads the client's address from; set here only, never believed from outside. */
export const CLIENT_ADDRESS_HEADER = "x-cyclemarket-client-address";

/**
 * Requests under /api/auth reach the auth library only with a bounded body whose fields are
 * storable (auth-body.ts); its limiter's 429 is said in the market's words with Retry-After;
 * its cookies are Secure when the request came over HTTPS through a trusted proxy.
 */
export function authRoute(services: Services) {
  const cfg = services.config;
  const proxies = managerProxies(cfg.TRUSTED_PROXIES);
  return async (req: IncomingMessage, res: ServerResponse, requestId: string) => {
    let raw: Buffer;
    try {
      raw = await readBody(req, cfg.AUTH_MAX_BODY_BYTES);
    } catch (e) {
      if (!(e instanceof BodyTooLarge)) throw e;
      res.setHeader("connection", "close");
      return refuseHttp(
        res,
        413,
        {
          code: "PAYLOAD_TOO_LARGE",
          message: `A request to /api/auth is at most ${cfg.AUTH_MAX_BODY_BYTES} bytes.`,
          reason: { code: "body-too-large", limit: "auth-body-bytes", max: cfg.AUTH_MAX_BODY_BYTES },
        },
        requestId,
      );
    }
    const url = new URL(req.url ?? "/", "http://market.invalid");
    const route = url.pathname.replace(/^\/api\/auth/, "");
    if (raw.length > 0) {
      let body: unknown;
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        return refuseHttp(res, 400, { code: "BAD_REQUEST", message: "The body must be JSON.", reason: { code: "invalid-input", issues: [] } }, requestId);
      }
      const checked = checkAuthBody(route, body);
      if (!checked.ok) {
        const message = checked.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
        return refuseHttp(res, 400, { code: "BAD_REQUEST", message, reason: { code: "invalid-input", issues: checked.issues } }, requestId);
      }
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined || k.startsWith(":")) continue;
      for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
    }
    headers.set(CLIENT_ADDRESS_HEADER, clientAddress(req, proxies));
    const response = await services.auth.handler(
      new Request(new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`), {
        method: req.method,
        headers,
        body: raw.length > 0 && req.method !== "GET" && req.method !== "HEAD" ? new Uint8Array(raw) : undefined,
      }),
    );
    // Anything but reading the session may end or change one: the sessions held in memory are
    // forgotten once the change is made and before it is answered, and a call that read a session
    // while it was being made does not keep it (auth/session-cache.ts).
    if (req.method !== "GET" || !route.startsWith("/get-session")) services.sessions.forget();
    if (response.status === 429) {
      const retry = Math.max(1, Number(response.headers.get("x-retry-after") ?? 60));
      const rule = authRuleFor(cfg, route);
      return refuseHttp(
        res,
        429,
        {
          code: "TOO_MANY_REQUESTS",
          message: `Too many requests of this kind from this address (${rule.limit}: at most ${rule.max} every ${rule.window} s). Try again in ${retry} s.`,
          reason: { code: "limit-reached", limit: rule.limit, max: rule.max, windowSeconds: rule.window, retryAfterSeconds: retry },
        },
        requestId,
      );
    }
    const secure = overHttps(req, proxies);
    res.statusCode = response.status;
    response.headers.forEach((value, key) => {
      if (key !== "set-cookie") res.setHeader(key, value);
    });
    const cookies = response.headers.getSetCookie().map((c) => (secure && !/;\s*secure/i.test(c) ? `${c}; Secure` : c));
    if (cookies.length) res.setHeader("set-cookie", cookies);
    res.setHeader("x-request-id", requestId);
    res.end(Buffer.from(await response.arrayBuffer()));
  };
}

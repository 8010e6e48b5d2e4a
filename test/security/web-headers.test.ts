import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { buildWebIfStale, startWebApp } from "../../scripts/stack.ts";
import { onFreePort } from "../../apps/market-manager/src/net/free-port.ts";

// Every page of the web app carries the security headers, and nothing says what serves it.

let web: ChildProcess;
let base: string;

beforeAll(async () => {
  await buildWebIfStale(() => {});
  const env = { NEXT_TELEMETRY_DISABLED: "1", MARKET_API_URL: "http://127.0.0.1:9" };
  await onFreePort(async (port) => {
    web = await startWebApp({ port, host: "127.0.0.1", env, log: () => {} });
    base = `http://127.0.0.1:${port}`;
  });
});
afterAll(async () => {
  // npx runs the server in the group started here: stop the whole group.
  if (web?.pid) process.kill(-web.pid, "SIGTERM");
});

describe("the web app's pages", () => {
  for (const page of ["/", "/signin", "/jobs/new", "/produce", "/no-such-page"]) {
    it(`${page} is sent with a CSP that allows workers and WebAssembly, no framing, nosniff and a referrer policy`, async () => {
      const res = await fetch(`${base}${page}`);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("'wasm-unsafe-eval'");
      expect(csp).toMatch(/worker-src 'self'/);
      expect(csp).not.toContain("'unsafe-eval'");
      expect(csp).toContain("object-src 'none'");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("x-powered-by")).toBeNull();
    });
  }
});

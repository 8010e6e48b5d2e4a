import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { startWebApp } from "../../scripts/stack.ts";
import { buildWebOnce } from "../support/web-build.ts";
import { onFreePort } from "../../apps/market-manager/src/net/free-port.ts";

// Every page of the web app carries the security headers, and nothing says what serves it.

let web: ChildProcess;
let base: string;

beforeAll(async () => {
  await buildWebOnce();
  const env = { NEXT_TELEMETRY_DISABLED: "1", MARKET_API_URL: "http://127.0.0.1:9" };
  await onFreePort(async (port) => {
    web = await startWebApp({ port, host: "127.0.0.1", env, log: () => {} });
    base = `http://127.0.0.1:${port}`;
  });
});
afterAll(async () => {
  // The server runs in the process group started here: stop the whole group.
  if (web?.pid) process.kill(-web.pid, "SIGTERM");
});

/** A policy's directives by name: `{ "script-src": ["'self'", ...] }`. */
function directives(policy: string): Record<string, string[]> {
  return Object.fromEntries(
    policy
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

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

    it(`${page} runs only the scripts it was sent with: every one carries this answer's nonce, no inline script is allowed`, async () => {
      const res = await fetch(`${base}${page}`);
      const policies = res.headers.get("content-security-policy")!;
      expect(policies).not.toContain(","); // one policy, not two combined
      const scriptSrc = directives(policies)["script-src"]!;
      expect(scriptSrc).toContain("'strict-dynamic'");
      expect(scriptSrc).not.toContain("'unsafe-inline'");
      const nonce = scriptSrc.find((v) => v.startsWith("'nonce-"))?.slice(7, -1);
      expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      const html = await res.text();
      const scripts = html.match(/<script\b[^>]*>/g) ?? [];
      expect(scripts.length).toBeGreaterThan(0);
      for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
      // A style element (Next.js writes some) needs the nonce too; style attributes are allowed.
      expect(directives(policies)["style-src"]).toEqual(["'self'", `'nonce-${nonce}'`]);
      for (const tag of html.match(/<style\b[^>]*>/g) ?? []) expect(tag).toContain(`nonce="${nonce}"`);
    });
  }

  it("gives every answer a nonce of its own", async () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${base}/`);
      await res.arrayBuffer();
      nonces.add(/'nonce-([^']+)'/.exec(res.headers.get("content-security-policy")!)![1]!);
    }
    expect(nonces.size).toBe(5);
  });

  it("sends the bundles (a Web Worker runs under its own script's policy) and /api one fixed policy without inline scripts", async () => {
    const html = await (await fetch(`${base}/produce`)).text();
    const bundle = /src="(\/_next\/static\/[^"]+\.js)"/.exec(html)![1]!;
    for (const path of [bundle, "/api/trpc/health"]) {
      const res = await fetch(`${base}${path}`);
      await res.arrayBuffer();
      const policy = directives(res.headers.get("content-security-policy") ?? "");
      expect(policy["script-src"]).toEqual(["'self'", "'wasm-unsafe-eval'"]);
      expect(policy["worker-src"]).toEqual(["'self'"]);
      expect(policy["frame-ancestors"]).toEqual(["'none'"]);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });
});

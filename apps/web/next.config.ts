import type { NextConfig } from "next";
import { assetPolicy } from "./lib/csp.ts";

// The headers every answer is sent with. The Content-Security-Policy of a page carries a nonce
// of its own (proxy.ts, lib/csp.ts); the bundles and /api, which proxy.ts does not see, get the
// same policy without one. No page may be framed, so no click-jacking.
const SECURITY_HEADERS = [
  { key: "X-Frame-Options", value: "DENY" },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  // With the opener policy this makes every page cross-origin isolated (it loads nothing from other
  // origins: the Market Manager is reached through /api), which gives /produce's sandbox workers
  // SharedArrayBuffer and Atomics.wait, so a CPU limit holds inside each task (wasm-pace.ts).
  { key: "Cross-Origin-Embedder-Policy", value: "require-corp" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=()" },
];

// /api/* reaches the Market Manager through app/api/[...path]/route.ts.
const config: NextConfig = {
  transpilePackages: ["@cyclemarket/worker-runtime", "@cyclemarket/costbenefit", "@cyclemarket/client"],
  // Says nothing an attacker needs to know.
  poweredByHeader: false,
  headers: async () => [
    { source: "/:path*", headers: SECURITY_HEADERS },
    // Exactly the paths proxy.ts leaves alone, so no answer carries two policies.
    { source: "/(api/.*|_next/static/.*|_next/image.*)", headers: [{ key: "Content-Security-Policy", value: assetPolicy(process.env.NODE_ENV === "development") }] },
  ],
};

export default config;

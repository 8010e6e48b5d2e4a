import type { NextConfig } from "next";

// The headers every page is sent with. The policy allows what the app does and nothing else:
// its own scripts (Next.js inlines its boot data, hence 'unsafe-inline' without nonces, which
// would make every page dynamic), WebAssembly compiled in page and in Web Workers
// ('wasm-unsafe-eval', not 'unsafe-eval'), module workers from its own origin, calls to its own
// /api, images it draws (data:, blob:). No page may be framed, so no click-jacking.
const CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = [
  { key: "Content-Security-Policy", value: CSP },
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
  headers: async () => [{ source: "/:path*", headers: SECURITY_HEADERS }],
};

export default config;

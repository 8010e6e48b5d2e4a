import type { NextConfig } from "next";

// The browser talks only to this origin; /api/* is the Market Manager (tRPC under /api/trpc,
// Better Auth under /api/auth), proxied here so cookies stay first-party.
const marketApi = process.env.MARKET_API_URL ?? "http://127.0.0.1:4000";

const config: NextConfig = {
  transpilePackages: ["@cyclemarket/worker-runtime", "@cyclemarket/costbenefit"],
  async rewrites() {
    return [{ source: "/api/:path*", destination: `${marketApi}/api/:path*` }];
  },
};

export default config;

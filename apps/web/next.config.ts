import type { NextConfig } from "next";

// /api/* reaches the Market Manager through app/api/[...path]/route.ts.
const config: NextConfig = {
  transpilePackages: ["@cyclemarket/worker-runtime", "@cyclemarket/costbenefit", "@cyclemarket/client"],
};

export default config;

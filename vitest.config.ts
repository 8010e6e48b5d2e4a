import { defineConfig } from "vitest/config";

// Four projects so each kind of test can be run alone: unit tests sit beside the code,
// integration and fault tests live under test/ and start a real PostgreSQL.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "apps/web/lib/**/*.test.ts"],
          environment: "node",
          // The Node pool's threads run a bundle of the worker runtime; rebuilt here when a source is newer.
          globalSetup: ["apps/worker-runtime/scripts/build-thread.mjs"],
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          // The cyclemarket CLI the tests run is the bundle users get (packages/client/dist).
          globalSetup: ["apps/worker-runtime/scripts/build-thread.mjs", "packages/client/scripts/build.mjs"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        // The attacks of a hostile or careless client, against a real market (`npm run test:security`).
        test: {
          name: "security",
          include: ["test/security/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 240_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "faults",
          include: ["test/faults/**/*.test.ts"],
          globalSetup: ["apps/worker-runtime/scripts/build-thread.mjs"],
          environment: "node",
          testTimeout: 300_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});

import { availableParallelism } from "node:os";
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

// Four kinds of test, each run alone with `npm run test:<kind>`: unit tests sit beside the code,
// integration, security and fault tests live under test/ and run against a real PostgreSQL.
//
// Files run side by side, three or more at once: most of a file's time is spent waiting on the
// market, its workers and their timers, so two files left two cores idle for much of the run's last
// minutes, once the end-to-end tests beside them were done. Each market has a database of
// its own, cloned from a migrated template on the one PostgreSQL the run starts
// (test/support/postgres-setup.ts). A test of the embedded server itself, and a fault test that
// kills or restarts PostgreSQL or the manager that owns it, starts a server of its own, so no
// other file feels it. The count is bounded: each market holds some twenty of the shared server's
// hundred connections.
const WORKERS = Math.min(4, Math.max(3, availableParallelism() - 1));

/**
 * Files that measure time under load (a bystander's latency, a CPU share kept by resting): a file
 * beside them would take the cores they measure, so they run after the others, one at a time, in
 * a project of their kind named `<kind>-alone`.
 */
const ALONE: Record<string, string[]> = {
  unit: ["apps/worker-runtime/src/producer-controls.test.ts"],
  security: ["test/security/fair-service.test.ts"],
};

type Settings = NonNullable<TestProjectInlineConfiguration["test"]>;

function kind(name: string, settings: Settings & { include: string[] }): TestProjectInlineConfiguration[] {
  const alone = ALONE[name] ?? [];
  const projects: TestProjectInlineConfiguration[] = [
    { test: { name, environment: "node", ...settings, exclude: [...configDefaults.exclude, ...alone], maxWorkers: WORKERS } },
  ];
  // Isolated, whatever the kind: Vitest runs a project of one worker that shares its modules in the
  // same group as the others, which it refuses when their counts of workers differ.
  if (alone.length) projects.push({ test: { name: `${name}-alone`, environment: "node", ...settings, include: alone, maxWorkers: 1, isolate: true } });
  return projects;
}

export default defineConfig({
  test: {
    projects: [
      ...kind("unit", {
        include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "apps/web/lib/**/*.test.ts"],
        // Unit files mock nothing and set nothing global, so a worker runs one after another on the
        // modules it has loaded: starting a process and loading the engine for each of them cost
        // more than most of their tests.
        isolate: false,
        // The Node pool's threads run a bundle of the worker runtime; rebuilt here when a source is newer.
        globalSetup: ["apps/worker-runtime/scripts/build-thread.mjs"],
      }),
      ...kind("integration", {
        include: ["test/integration/**/*.test.ts"],
        // The cyclemarket CLI the tests run is the bundle users get (packages/client/dist).
        globalSetup: ["apps/worker-runtime/scripts/build-thread.mjs", "packages/client/scripts/build.mjs", "test/support/postgres-setup.ts"],
        // Each file starts and stops its own market on a database of its own: a worker runs one file
        // after another on the modules it has loaded (the Market Manager's, above all, whose loading
        // cost more per file than most files' tests).
        isolate: false,
        testTimeout: 60_000,
        hookTimeout: 120_000,
      }),
      // The attacks of a hostile or careless client, against a real market (`npm run test:security`).
      ...kind("security", {
        include: ["test/security/**/*.test.ts"],
        globalSetup: ["test/support/postgres-setup.ts"],
        isolate: false, // as integration's
        testTimeout: 60_000,
        hookTimeout: 240_000,
      }),
      ...kind("faults", {
        include: ["test/faults/**/*.test.ts"],
        globalSetup: ["apps/worker-runtime/scripts/build-thread.mjs", "test/support/postgres-setup.ts"],
        testTimeout: 300_000,
        hookTimeout: 180_000,
      }),
    ],
  },
});

import { defineConfig } from "@playwright/test";

// End-to-end tests drive the real market (PostgreSQL, Market Manager, web app, a Node worker)
// started by test/e2e/global-setup.ts in Debian's Chromium, on free ports it chooses: the web app's
// address reaches this file in the workers through the environment global setup leaves them.
export default defineConfig({
  testDir: "test/e2e",
  globalSetup: "./test/e2e/global-setup.ts",
  timeout: 180_000,
  expect: { timeout: 30_000 },
  workers: 1,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: ".tmp/playwright-results.json" }]],
  use: {
    baseURL: process.env.E2E_WEB_URL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    },
  },
  outputDir: ".tmp/test-results",
});

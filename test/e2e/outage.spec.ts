import { expect, test } from "./fixtures.ts";
import { signUp } from "./users.ts";
import { startProducing, submitMonteCarlo } from "./pages.ts";
import { startManager, stopManager } from "./control.ts";

// The Market Manager restarts (an operator's restart, a crash): every page open says it is
// reconnecting and for how long, keeps what it showed, never shows a library's error text, and
// recovers by itself once the manager is back; the producing tab says it waits for the market.

const RAW_ERRORS = /Unable to transform response|stream:|fetch failed|Failed to fetch|ECONNREFUSED/;

test("pages say they are reconnecting while the market is away, keep what they showed, and recover by themselves", async ({ page, context }) => {
  test.setTimeout(300_000);
  await signUp(page, "Olga", `olga-${Date.now()}@example.test`);
  await submitMonteCarlo(page, { tasks: 2, name: "Seen through a restart" });
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 120_000 });
  const jobs = await context.newPage();
  await jobs.goto("/jobs");
  await expect(jobs.getByText("Seen through a restart")).toBeVisible();
  const producer = await context.newPage();
  await startProducing(producer);
  await expect(producer.getByTestId("producer-status")).toHaveText("producing");

  await stopManager();
  try {
    for (const p of [page, jobs, producer]) {
      await expect(p.getByTestId("connection-banner")).toContainText("Reconnecting to the market", { timeout: 30_000 });
    }
    // The time it has been trying goes up.
    const first = await page.getByTestId("connection-away-for").innerText();
    await expect(page.getByTestId("connection-away-for")).not.toHaveText(first, { timeout: 5_000 });
    // What each page showed is still there.
    await expect(page.getByTestId("job-status")).toHaveText(/completed/i);
    await expect(jobs.getByText("Seen through a restart")).toBeVisible();
    await expect(producer.getByTestId("producer-status")).toHaveText("waiting", { timeout: 30_000 });
    await expect(producer.getByRole("status").filter({ hasText: "Waiting for the market" })).toBeVisible();
    for (const p of [page, jobs, producer]) await expect(p.locator("body")).not.toContainText(RAW_ERRORS);
  } finally {
    await startManager();
  }

  for (const p of [page, jobs, producer]) await expect(p.getByTestId("connection-banner")).toHaveCount(0, { timeout: 60_000 });
  await expect(producer.getByTestId("producer-status")).toHaveText("producing", { timeout: 60_000 });
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i);
  for (const p of [page, jobs, producer]) await expect(p.locator("body")).not.toContainText(RAW_ERRORS);
});

import { expect, test, type Page } from "./fixtures.ts";
import { signUp } from "./users.ts";
import { startProducing, submitMonteCarlo } from "./pages.ts";

// A producer pauses their tab from /produce: it stays in the market but receives no work while a
// job waits (the local Node worker does it alone), and takes work again once resumed. The
// consumer then cancels the job from its page.

async function tabPausedInMarket(producer: Page, paused: boolean) {
  const machineShortId = (await producer.getByTestId("producer-machine-id").innerText()).trim();
  await expect
    .poll(async () => {
      const res = await producer.request.get("/api/trpc/machines.list");
      const machines = (await res.json()).result.data as { id: string; controls: { paused: boolean }; offering: boolean }[];
      const tab = machines.find((m) => m.id.endsWith(machineShortId));
      return tab ? { paused: tab.controls.paused, offering: tab.offering } : null;
    })
    .toEqual({ paused, offering: !paused });
}

test("a paused producer tab receives no work while a job waits, and takes work once resumed", async ({ page, context }) => {
  test.setTimeout(300_000);
  await signUp(page, "Pia", `pia-${Date.now()}@example.test`);
  const producer = await context.newPage();
  await startProducing(producer);
  // Its standing, as the market computes it: this test market trusts its producers (a closed market).
  await expect(producer.getByTestId("producer-standing")).toHaveText(/Yes, trusted by the market/);
  await expect(producer.getByTestId("standing-ceiling")).toHaveText("10 cr");
  await producer.getByTestId("producer-pause").click();
  await expect(producer.getByTestId("producer-status")).toHaveText("paused");
  await tabPausedInMarket(producer, true);
  // Earlier tests' work still queued may have reached the tab before it paused: counted from here.
  await expect(producer.getByTestId("producer-running")).toHaveText("0 / 1");
  const doneAtPause = await producer.getByTestId("producer-done").innerText();

  await submitMonteCarlo(page, { tasks: 12, samplesPerTask: 300_000_000, benefit: 600, name: "Waits for the worker" });
  await expect(page.getByTestId("job-status")).toHaveText(/admitted|running/i, { timeout: 30_000 });
  // Several seconds of a waiting job: the paused tab runs nothing and does nothing more.
  for (let i = 0; i < 6; i++) {
    await producer.waitForTimeout(1_000);
    await expect(producer.getByTestId("producer-running")).toHaveText("0 / 1");
    await expect(producer.getByTestId("producer-done")).toHaveText(doneAtPause);
  }
  await expect(page.getByTestId("job-status")).not.toHaveText(/completed/i);
  await expect(producer.getByRole("status").filter({ hasText: "Paused" })).toBeVisible();

  await producer.getByTestId("producer-resume").click();
  await expect(producer.getByTestId("producer-status")).toHaveText("producing");
  await tabPausedInMarket(producer, false);
  await expect.poll(async () => Number(await producer.getByTestId("producer-done").innerText()), { timeout: 120_000 }).toBeGreaterThan(Number(doneAtPause));

  // The consumer stops the rest from the job's page: charged for the tasks done.
  await expect(page.getByTestId("job-status")).not.toHaveText(/completed/i);
  await page.getByRole("button", { name: "Cancel job" }).click();
  await page.getByRole("button", { name: "Yes, cancel the job" }).click();
  await expect(page.getByTestId("job-status")).toHaveText(/cancelled/i);
  await expect(page.getByText(/^Charged [\d.,]+ credits for the tasks already done/)).toBeVisible();
});

test("a producer tab's CPU limit holds inside each task: the page is isolated and its tasks rest while they run", async ({ page, context }) => {
  test.setTimeout(300_000);
  await signUp(page, "Ciro", `ciro-${Date.now()}@example.test`);
  const producer = await context.newPage();
  await producer.goto("/produce");
  // Cross-origin isolation gives the sandbox workers SharedArrayBuffer and Atomics.wait.
  expect(await producer.evaluate(() => crossOriginIsolated)).toBe(true);
  const form = producer.getByTestId("tab-controls");
  await form.getByLabel("CPU limit (% of each core)").fill("40");
  await form.getByRole("button", { name: "Keep for when I start" }).click();
  await startProducing(producer);

  // Tasks of about a second each: a paced task rests for 150 ms after every 100 ms it computes.
  await submitMonteCarlo(page, { tasks: 12, samplesPerTask: 30_000_000, benefit: 600, name: "Runs under a CPU limit" });
  await expect(producer.getByRole("list", { name: "Last results" }).getByText(/rested [\d.,]+ (ms|s|min) of it for the CPU limit/).first()).toBeVisible({ timeout: 180_000 });
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 180_000 });
});

import { expect, type Page } from "@playwright/test";

// Steps several specs take through the pages, as a person does.

/** Submits a Monte Carlo pi job from /jobs/new and waits for its page. */
export async function submitMonteCarlo(page: Page, job: { tasks: number; name?: string; samplesPerTask?: number; benefit?: number; maxSpend?: number }) {
  await page.goto("/jobs/new");
  await page.getByLabel("Example").selectOption({ label: "Monte Carlo pi" });
  await page.getByLabel("Number of tasks").fill(String(job.tasks));
  if (job.samplesPerTask) await page.getByLabel("Samples per task").fill(String(job.samplesPerTask));
  if (job.name) await page.getByLabel("Job name").fill(job.name);
  if (job.benefit) await page.getByLabel("Benefit", { exact: true }).fill(String(job.benefit));
  if (job.maxSpend) await page.getByLabel("Spending limit (credits, optional)").fill(String(job.maxSpend));
  await page.getByRole("button", { name: "Submit job" }).click();
  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
}

/**
 * Starts selling this tab's cycles on one core. The market gives work to the machine that asks
 * least per unit of work (price over benchmarked speed), and the local worker asks 1 credit a
 * second. A browser benchmarked while the suite loads both cores may measure at a tenth of the
 * worker's speed or less, so the tab asks a hundredth: it is the cheaper machine whatever the two
 * benchmarks say.
 */
export async function startProducing(page: Page, { price = 0.01 }: { price?: number } = {}) {
  await page.goto("/produce");
  await page.getByLabel("Cores to use").fill("1");
  await page.getByLabel("Price per second (credits)").fill(String(price));
  await page.getByRole("button", { name: "Start producing" }).click();
  await expect(page.getByTestId("producer-machine-id")).not.toHaveText("—", { timeout: 60_000 });
}


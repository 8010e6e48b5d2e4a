import { expect, test, type Page } from "./fixtures.ts";
import { signIn, signUp, stack } from "./users.ts";

// What an admin sees of the market over time: the history charts fill in and move while the page
// is open, and the decision log says in words why a job was admitted.

function signInAsAdmin(page: Page) {
  const { email, password } = stack().admin!;
  return signIn(page, email, password);
}

test("the admin's history charts draw the market's samples and keep moving", async ({ page }) => {
  await signInAsAdmin(page);
  await page.goto("/admin");
  const chart = page.getByTestId("history-chart-0");
  await expect(chart.locator("canvas").first()).toBeVisible();
  await expect.poll(async () => Number(await chart.getAttribute("data-points")), { timeout: 30_000 }).toBeGreaterThan(1);
  const first = Number(await chart.getAttribute("data-last"));
  const pixels = await chart.locator("canvas").first().evaluate((c: HTMLCanvasElement) => c.toDataURL());
  // The market samples itself every 5 seconds and the chart asks for the new samples as often.
  await expect.poll(async () => Number(await chart.getAttribute("data-last")), { timeout: 30_000 }).toBeGreaterThan(first);
  await expect.poll(() => chart.locator("canvas").first().evaluate((c: HTMLCanvasElement) => c.toDataURL()), { timeout: 30_000 }).not.toBe(pixels);
  // The market's figures of the moment arrive every second.
  const pulse = page.getByTestId("admin-pulse");
  const at = await pulse.getAttribute("data-updated");
  await expect.poll(() => pulse.getAttribute("data-updated"), { timeout: 10_000 }).not.toBe(at);
  // Another range is another tier of the history, still drawn.
  await page.getByRole("button", { name: "last day" }).click();
  await expect(page.getByText(/one per 60 seconds/)).toBeVisible();
  await expect.poll(async () => Number(await chart.getAttribute("data-points"))).toBeGreaterThan(0);
});

test("the decision log shows a job's admission with its reason, and the job links to it", async ({ browser }) => {
  const buyer = await browser.newContext();
  const page = await buyer.newPage();
  await signUp(page, "Log Reader", "log-reader@example.test");
  const res = await page.request.post("/api/trpc/jobs.submit", {
    data: {
      name: "logged pi",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 100_000 }, taskCount: 2 },
      benefit: { kind: "constant", value: 50 },
    },
  });
  expect(res.ok()).toBe(true);
  const { jobId, decision } = (await res.json()).result.data as { jobId: string; decision: { outcome: string } };
  expect(decision.outcome).toBe("admitted");
  // The owner reaches the job's own decisions from its page.
  await page.goto(`/jobs/${jobId}`);
  await page.getByRole("link", { name: "The market's decisions about this job" }).click();
  await expect(page.locator('[data-testid="decision"][data-outcome="admission"]')).toContainText("Worth running");
  await buyer.close();

  const admin = await browser.newContext();
  const adminPage = await admin.newPage();
  await signInAsAdmin(adminPage);
  await adminPage.goto(`/admin/decisions?job=${jobId}`);
  const admission = adminPage.locator('[data-testid="decision"][data-outcome="admission"]');
  await expect(admission).toContainText("logged pi");
  await expect(admission).toContainText("Worth running: the benefit of");
  await expect(admission).toContainText("log-reader@example.test");
  await expect(adminPage.locator('[data-testid="decision"][data-outcome="placement"]').first()).toContainText(/task.* on local-worker/);
  // Filtering by outcome leaves only admissions.
  await adminPage.getByLabel("Outcome").selectOption("admission");
  await adminPage.getByRole("button", { name: "Filter" }).click();
  await expect(adminPage.locator('[data-testid="decision"]')).toHaveCount(1);
  await admin.close();
});

import { expect, test, watchErrors } from "./fixtures.ts";
import { signIn, signUp, stack } from "./users.ts";
import { startProducing, submitMonteCarlo } from "./pages.ts";

// Every page of the web app under its Content-Security-Policy in Chromium, as a consumer and
// producer and as the admin: each draws what it is for (charts, live figures, the producer's
// Web Workers running WebAssembly) with nothing refused and no error in the console.

test("every page runs under the policy with nothing refused and no error in the console", async ({ page, context, browser }) => {
  test.setTimeout(300_000);
  const seen = await watchErrors(context);

  for (const path of ["/", "/signin", "/signup"]) {
    const res = await page.goto(path);
    expect(res?.headers()["content-security-policy"]).toContain("'strict-dynamic'");
    await expect(page.locator("main")).not.toBeEmpty();
  }
  await signUp(page, "Csp", `csp-${Date.now()}@example.test`);

  // A tab producing: its Web Workers compile and run the tasks' WebAssembly.
  const producer = await context.newPage();
  await startProducing(producer);

  // The new job's page draws the benefit curve (uPlot), the job's page its progress; the tab and
  // the local Node worker share the tasks.
  await page.goto("/jobs/new");
  await expect(page.locator("canvas").first()).toBeVisible();
  await submitMonteCarlo(page, { tasks: 16, name: "Under the policy" });
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 120_000 });
  await expect(page.locator("canvas").first()).toBeVisible();
  expect(Number(await producer.getByTestId("producer-done").innerText())).toBeGreaterThan(0);
  await page.getByRole("link", { name: "The market's decisions about this job" }).click();
  await expect(page.locator('[data-testid="decision"]').first()).toBeVisible();

  for (const path of ["/jobs", "/account", "/account/credits", "/no-such-page"]) {
    await page.goto(path);
    await expect(page.locator("main")).not.toBeEmpty();
  }
  await producer.getByRole("button", { name: "Stop producing" }).click();

  // The admin's pages: live figures over a stream, the history charts, the decision log.
  const adminContext = await browser.newContext();
  const adminSeen = await watchErrors(adminContext);
  const admin = await adminContext.newPage();
  await signIn(admin, stack().admin!.email, stack().admin!.password);
  await admin.goto("/admin");
  await expect(admin.getByTestId("admin-live")).toHaveAttribute("data-live", "true");
  await expect(admin.getByTestId("history-chart-0").locator("canvas").first()).toBeVisible();
  await admin.goto("/admin/decisions");
  await expect(admin.locator('[data-testid="decision"]').first()).toBeVisible();
  await adminContext.close();

  expect([...seen.policy, ...adminSeen.policy], "refused by the Content-Security-Policy").toEqual([]);
  // A missing page answers 404, which the browser logs; nothing else may be an error.
  const errors = [...seen.errors, ...adminSeen.errors].filter((e) => !/no-such-page: Failed to load resource: .*404/.test(e));
  expect(errors, "errors in the console").toEqual([]);
});

import { join } from "node:path";
import { expect, test, type Browser } from "./fixtures.ts";
import { root } from "../../scripts/stack.ts";
import { signIn, signUp, stack } from "./users.ts";
import { startProducing, submitMonteCarlo } from "./pages.ts";

// The whole market through its pages, in Chromium: a consumer submits a Monte Carlo job while a
// second tab sells this browser's cycles; the local Node worker and the browser share the work.

/** A page signed in as the market's admin, in a context of its own, for reading the market's state. */
async function adminPage(browser: Browser) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const { email, password } = stack().admin!;
  await signIn(page, email, password);
  return {
    machines: async () => {
      const res = await page.request.get("/api/trpc/admin.overview");
      return (await res.json()).result.data.machines as { id: string; status: string }[];
    },
    close: () => context.close(),
  };
}

test("a consumer's Monte Carlo job runs on the Node worker and a browser producer tab", async ({ page, context }) => {
  await signUp(page, "Ada", `ada-${Date.now()}@example.test`);

  const producer = await context.newPage();
  await startProducing(producer);

  // The tab's speed as the market measured it (its benchmark, so it varies with the host's load).
  const speedOf = async () => ((await (await producer.request.get("/api/trpc/machines.list")).json()).result.data as { speed: number }[])[0]?.speed ?? 0;
  await expect.poll(speedOf).toBeGreaterThan(0);
  const tabSpeed = await speedOf();

  await page.goto("/jobs/new");
  await page.getByLabel("Example").selectOption({ label: "Monte Carlo pi" });
  // Twenty tasks of about half a reference second each, due sooner than the tab (the cheaper
  // machine) finishes them alone, so the market places work on both (with no deadline the cheaper
  // one would get it all); the local worker at least half as fast leaves both together well within it.
  const deadline = Math.ceil((0.85 * 20 * 0.5) / tabSpeed);
  await page.getByLabel("Number of tasks").fill("20");
  await page.getByLabel("Samples per task").fill("50000000");
  await page.getByLabel("Curve shape").selectOption("deadline");
  await page.getByLabel("Benefit", { exact: true }).fill("600");
  await page.getByLabel("Deadline (seconds after submitting)").fill(String(deadline));
  await page.getByRole("button", { name: "Get a quote" }).click();
  await expect(page.getByTestId("quote").getByTestId("decision-outcome")).toHaveText("admitted");
  await page.getByRole("button", { name: "Submit job" }).click();

  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 120_000 });
  const pi = Number((await page.getByTestId("pi-estimate").innerText()).replace(/[^0-9.]/g, ""));
  expect(Math.abs(pi - Math.PI)).toBeLessThan(0.01);

  // Both machines did some of the work.
  const machines = page.getByRole("list", { name: "Machines" }).getByRole("listitem");
  await expect(machines).toHaveCount(2);
  await expect(page.getByRole("list", { name: "Machines" })).toContainText("local-worker");
  expect(Number(await producer.getByTestId("producer-done").innerText())).toBeGreaterThan(0);
});

test("a module that is not WebAssembly is refused with its reason and creates no job", async ({ page }) => {
  await signUp(page, "Grace", `grace-${Date.now()}@example.test`);
  await page.goto("/jobs/new");
  await page.getByRole("radio", { name: /upload/i }).check({ force: true });
  await page.getByLabel("Module (.wasm)").setInputFiles({ name: "job.wasm", mimeType: "application/wasm", buffer: Buffer.from("#!/bin/sh\necho hello\n") });
  await page.getByLabel("Task arguments (one task per line)").fill("1\n2");
  await page.getByRole("button", { name: "Submit job" }).click();
  await expect(page.getByRole("alert").filter({ hasText: /not (submitted|sent)/i })).toContainText(/not (a )?WebAssembly/i);
  await page.goto("/jobs");
  await expect(page.getByText(/no jobs yet/i)).toBeVisible();
});

test("the admin sees machines and jobs, and new ones as they come", async ({ page, browser }) => {
  // The end-to-end market is always new, so its first start printed the admin's password.
  const admin = stack().admin;
  expect(admin).not.toBeNull();
  await signIn(page, admin!.email, admin!.password);
  await page.goto("/admin");
  await expect(page.getByRole("table", { name: "Machines" })).toContainText("local-worker");
  await expect(page.getByRole("table", { name: "Jobs" })).toContainText(/completed/i);

  // The market pushes its changes: a job submitted elsewhere appears without a reload or a poll.
  await expect(page.getByTestId("admin-live")).toHaveAttribute("data-live", "true");
  const consumer = await browser.newContext();
  const buyer = await consumer.newPage();
  await signUp(buyer, "Barbara", `barbara-${Date.now()}@example.test`);
  await submitMonteCarlo(buyer, { tasks: 2, name: "Watched live" });
  await expect(page.getByRole("table", { name: "Jobs" })).toContainText("Watched live", { timeout: 10_000 });
  await expect(page.getByTestId("admin-live")).toHaveAttribute("data-live", "true");
  await consumer.close();
});

test("closing a producing tab gives its unfinished task back to the market at once", async ({ page, context, browser }) => {
  await signUp(page, "Alan", `alan-${Date.now()}@example.test`);
  const producer = await context.newPage();
  await startProducing(producer);
  const machineShortId = (await producer.getByTestId("producer-machine-id").innerText()).trim();

  // Tasks of about a second each, so the tab is caught in the middle of one. The quote is priced
  // on the cheap tab.
  await submitMonteCarlo(page, { tasks: 4, samplesPerTask: 100_000_000, maxSpend: 50 });
  await expect(producer.getByTestId("producer-running")).toHaveText(/^1\b/, { timeout: 60_000 });
  const closedAt = Date.now();
  await producer.close({ runBeforeUnload: true });

  // The admin sees the tab's machine depart well before its lease could have expired (30 s).
  const admin = await adminPage(browser);
  await expect.poll(async () => (await admin.machines()).find((m) => m.id.endsWith(machineShortId))?.status, { timeout: 15_000 }).toBe("departed");
  expect(Date.now() - closedAt).toBeLessThan(25_000);
  await admin.close();

  // The tasks are back in the market. The Node worker asks more than the quote has left, and the
  // market pays producers no more than the job is charged: they wait for a machine that asks less,
  // and the page says so (budget-handback.test.ts has such a machine join and finish the job).
  await expect(page.getByText(/waits? for a machine that asks less/)).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId("job-status")).toHaveText(/running/i);
});

test("a new consumer sees their starting credits at once, before any job", async ({ page }) => {
  await signUp(page, "Lise", `lise-${Date.now()}@example.test`);
  await expect(page.getByTestId("balance")).toHaveText("1,000 cr");
  await page.goto("/account/credits");
  await expect(page.getByTestId("consumer-balance")).toHaveText("1,000 cr");
  await expect(page.getByRole("table", { name: "Statement" })).toContainText("Starting credits");
});

test("a replicated job waits for a second owner's machine and says why, runs when a tab starts producing, and shows one output per task", async ({ page, context, browser }) => {
  // Earlier tests' producing tabs are gone once their machines have departed: the local worker is left.
  const admin = await adminPage(browser);
  await expect.poll(async () => (await admin.machines()).filter((m) => m.status === "active").length, { timeout: 90_000 }).toBe(1);
  await admin.close();

  await signUp(page, "Hedy", `hedy-${Date.now()}@example.test`);
  await page.goto("/jobs/new");
  await page.getByRole("radio", { name: /upload/i }).check({ force: true });
  await page.getByLabel("Module (.wasm)").setInputFiles(join(root, "apps/worker-runtime/examples/build/montecarlo.wasm"));
  await page.getByLabel("Task arguments (one task per line)").fill("20000 0\n20000 1");
  await page.getByLabel("Job name").fill("Checked twice");
  await page.getByLabel("Replicas per task").fill("2");
  await page.getByLabel("Spending limit (credits, optional)").fill("50");
  await page.getByRole("button", { name: "Submit job" }).click();
  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);

  await expect(page.getByTestId("job-status")).toHaveText(/delayed/i);
  await expect(page.getByTestId("job-waiting")).toContainText("Each task runs as 2 copies, each on a machine of a different owner so that the copies verify each other, and 1 owner has machines connected");

  const producer = await context.newPage();
  await startProducing(producer);
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 120_000 });
  await expect(page.getByTestId("job-waiting")).toHaveCount(0);
  // The uploaded module is the Monte Carlo example, so the page combines its outputs: one per task, not per copy.
  await expect(page.getByTestId("tasks-combined")).toHaveText("2");
  await producer.close({ runBeforeUnload: true });

  // The statement names the job and links to it.
  const jobUrl = page.url();
  await page.goto("/account/credits");
  await page.getByRole("table", { name: "Statement" }).getByRole("link", { name: "Settlement of job Checked twice" }).click();
  await expect(page).toHaveURL(jobUrl);
});

import { createHash } from "node:crypto";
import { expect, test, type Page } from "./fixtures.ts";
import { signIn, signUp, stack } from "./users.ts";

// Adding credits, as people do it on the pages: an admin grants them from /admin and the consumer
// reads who and why on their statement; a user who also sells moves their earnings to their
// balance with one click; a quote the balance cannot escrow says so, with what it would cost and
// what is missing. And the Account page's install commands reach the market's own packages.

/** A call as the page makes it, with the page's session: a mutation, or with `query` a query. */
async function trpc(page: Page, path: string, input: unknown, query = false) {
  const res = query ? await page.request.get(`/api/trpc/${path}`) : await page.request.post(`/api/trpc/${path}`, { data: input });
  expect(res.ok(), await res.text()).toBe(true);
  return (await res.json()).result.data;
}

test("an admin grants credits from /admin, once however often clicked, and the consumer sees who and why", async ({ browser }) => {
  const buyer = await (await browser.newContext()).newPage();
  const email = `grace-${Date.now()}@example.test`;
  await signUp(buyer, "Grace", email);
  await expect(buyer.getByTestId("balance")).toHaveText("1,000 cr");

  const admin = await (await browser.newContext()).newPage();
  const { email: adminEmail, password } = stack().admin!;
  await signIn(admin, adminEmail, password);
  // Signed in, the admin lands on the market's page, not on a job list of their own.
  await admin.waitForURL(/\/admin$/);
  const form = admin.getByRole("form", { name: "Grant credits" });
  await form.getByLabel("Consumer's email").fill(email);
  await form.getByLabel("Credits", { exact: true }).fill("250");
  await form.getByLabel("Reason").fill("welcome back");
  await form.getByRole("button", { name: "Grant" }).dblclick();
  await expect(admin.getByTestId("grant-done")).toContainText(`250 cr granted to ${email}`);
  await expect(admin.getByRole("table", { name: "Latest grants" })).toContainText(email);
  // An address no consumer has is named in the refusal, and nothing is granted.
  await form.getByLabel("Consumer's email").fill("nobody@example.test");
  await form.getByLabel("Credits", { exact: true }).fill("5");
  await form.getByLabel("Reason").fill("typo");
  await form.getByRole("button", { name: "Grant" }).click();
  await expect(admin.getByText("Nothing was granted")).toBeVisible();

  await buyer.goto("/account/credits");
  await expect(buyer.getByTestId("consumer-balance")).toHaveText("1,250 cr");
  const statement = buyer.getByRole("table", { name: "Statement" });
  await expect(statement).toContainText("Credits granted by Market admin");
  await expect(statement).toContainText("Reason: welcome back");
  await buyer.context().close();
  await admin.context().close();
});

test("a user who also sells moves their earnings to their balance with one click", async ({ page, browser }) => {
  await signUp(page, "Hedy", `hedy-${Date.now()}@example.test`);
  // Their machine (registered through the API, as a worker does) is paid for a job of someone else's.
  const { machineId } = await trpc(page, "worker.register", {
    name: "hedy-rack", kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.001, userAgent: "e2e",
  });
  const other = await (await browser.newContext()).newPage();
  await signUp(other, "Ida", `ida-${Date.now()}@example.test`);
  await trpc(other, "jobs.submit", {
    // Tasks long enough that the local worker, busy with one, leaves the rest for Hedy's cheaper machine to take.
    name: "pays hedy", source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 50_000_000 }, taskCount: 8 }, benefit: { kind: "constant", value: 20 },
  });
  const stdout = Buffer.from("3 4\n").toString("base64");
  const outputHash = createHash("sha256").update("3 4\n").digest("hex");
  await expect
    .poll(
      async () => {
        const { leases } = await trpc(page, "worker.lease", { machineId, max: 4 });
        if (leases.length) {
          await trpc(page, "worker.reportMany", { reports: leases.map((l: { leaseId: string }) => ({ machineId, leaseId: l.leaseId, exitCode: 0, elapsedMs: 500, stdout, stderr: "", outputHash })) });
        }
        return (await trpc(page, "ledger.balance", undefined, true)).producerBalance as number;
      },
      { timeout: 60_000 },
    )
    .toBeGreaterThan(0);
  await trpc(page, "worker.depart", { machineId });
  await other.context().close();

  const before = await trpc(page, "ledger.balance", undefined, true);
  await page.goto("/account");
  await page.getByTestId("move-earnings").dblclick();
  await expect(page.getByTestId("earnings-moved")).toContainText("from your earnings to your balance");
  await expect(page.getByTestId("account-producer-balance")).toHaveText("0 cr");
  await expect(page.getByTestId("move-earnings")).toHaveCount(0);
  // Everything earned moved, once, double click and all.
  const after = await trpc(page, "ledger.balance", undefined, true);
  expect(after.consumerBalance).toBeCloseTo(before.consumerBalance + before.producerBalance, 6);
  await page.goto("/account/credits");
  await expect(page.getByRole("table", { name: "Statement" })).toContainText("Moved from your producer earnings");
  await expect(page.getByRole("table", { name: "Statement" })).toContainText("Moved to your consumer balance");
});

test("a quote the balance cannot escrow says Not enough credits, what it would cost and what is missing; the default form is admitted", async ({ page }) => {
  await signUp(page, "Joan", `joan-${Date.now()}@example.test`);
  await page.goto("/jobs/new");
  await page.getByLabel("Example").selectOption({ label: "Monte Carlo pi" });
  // The form's defaults: admitted, holding a small part of the balance.
  await page.getByRole("button", { name: "Get a quote" }).click();
  const quote = page.getByTestId("quote");
  await expect(quote.getByTestId("decision-outcome")).toHaveText("admitted");
  await expect(quote.getByTestId("decision-escrow")).toContainText("of your 1,000 cr");
  await expect(page.getByTestId("insufficient-credits")).toHaveCount(0);

  // A big job worth far more than the balance: worth running, but its escrow does not fit.
  await page.getByLabel("Number of tasks").fill("200");
  await page.getByLabel("Samples per task").fill("1000000000");
  await page.getByLabel("Benefit", { exact: true }).fill("50000");
  await page.getByRole("button", { name: "Get a quote" }).click();
  await expect(quote.getByTestId("decision-headline")).toHaveText(/^Not enough credits/);
  await expect(quote).not.toContainText("Admitted");
  await expect(quote.getByTestId("short-price")).toHaveText(/cr$/);
  await expect(quote.getByTestId("short-missing")).toHaveText(/cr$/);
  await expect(quote).toContainText("your balance is 1,000 cr");
  // The quote says it: the form's own guess does not say it again beside it.
  await expect(page.getByTestId("insufficient-credits")).toHaveCount(0);
});

test("the Account and Produce pages' install commands fetch the market's own packages through the web app", async ({ page, baseURL }) => {
  await signUp(page, "Kay", `kay-${Date.now()}@example.test`);
  await page.goto("/account");
  await expect(page.getByTestId("worker-install-command")).toHaveText(`npx --yes ${baseURL}/downloads/cyclemarket-worker.tgz --url ${baseURL} --token <token>`);
  await expect(page.getByTestId("client-install-command")).toHaveText(`npm install ${baseURL}/downloads/cyclemarket-client.tgz`);
  for (const link of ["worker-download", "client-download"]) {
    const res = await page.request.get((await page.getByTestId(link).getAttribute("href"))!);
    expect(res.status()).toBe(200);
    const body = await res.body();
    expect([body[0], body[1]]).toEqual([0x1f, 0x8b]); // gzip
  }
  await page.goto("/produce");
  await expect(page.getByTestId("worker-install-command")).toContainText(`/downloads/cyclemarket-worker.tgz --url ${baseURL}`);
});

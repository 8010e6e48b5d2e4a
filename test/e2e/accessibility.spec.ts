import { AxeBuilder } from "@axe-core/playwright";
import { expect, test, type Page } from "./fixtures.ts";
import { signIn, signUp, stack } from "./users.ts";
import { startProducing, submitMonteCarlo } from "./pages.ts";

// Every page, signed out and for each role (a consumer, a producer, the admin), passes axe-core's
// checks with no serious or critical violation (colour contrast among them), and at a phone's
// width (390 px) keeps its header to two lines, splits no word in it and does not scroll sideways.

const PHONE = { width: 390, height: 844 };

/** axe-core's serious and critical violations on the page as it is now, one line each, with the elements behind them. */
async function violations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help}; ${v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary?.split("\n").slice(1).join(" ") ?? ""}`).join(" | ")}`);
}

/** How the header and the page lay out at the current width: rows of the header, items that wrap, sideways overflow. */
function layout(page: Page) {
  return page.evaluate(() => {
    const bar = document.querySelector("header > div")!;
    // Items on one line overlap vertically (centred, their tops differ); each item below them all starts a line.
    const boxes = [...bar.children].filter((el) => (el as HTMLElement).offsetParent !== null).map((el) => el.getBoundingClientRect());
    boxes.sort((a, b) => a.top - b.top);
    let rows = 0;
    let bottom = -Infinity;
    for (const box of boxes) {
      if (box.top >= bottom - 1) rows++;
      bottom = Math.max(bottom, box.bottom);
    }
    // An element whose text wraps has more than one box: a word split over two lines.
    const wrapped = [...bar.querySelectorAll("a, button, span, bdi")]
      // (Text only for screen readers is a 1 px box, which wraps by design.)
      .filter((el) => (el as HTMLElement).offsetParent !== null && el.getBoundingClientRect().width > 1 && el.getClientRects().length > 1)
      .map((el) => el.textContent?.trim() ?? "");
    return { rows, wrapped, scrollWidth: document.documentElement.scrollWidth };
  });
}

/** Visits each path: axe at the desktop width, then the phone's layout. */
async function check(page: Page, paths: string[], ready?: (path: string) => Promise<void>) {
  const problems: Record<string, string[]> = {};
  for (const path of paths) {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(path);
    await expect(page.locator("main")).not.toBeEmpty();
    await ready?.(path);
    const found = await violations(page);
    await page.setViewportSize(PHONE);
    await page.goto(path);
    await expect(page.locator("main")).not.toBeEmpty();
    await ready?.(path);
    const phone = await layout(page);
    if (phone.rows > 2) found.push(`at 390 px the header takes ${phone.rows} lines`);
    if (phone.wrapped.length) found.push(`at 390 px these header items wrap: ${phone.wrapped.join(", ")}`);
    if (phone.scrollWidth > PHONE.width) found.push(`at 390 px the page is ${phone.scrollWidth} px wide`);
    found.push(...(await violations(page)).map((v) => `at 390 px: ${v}`));
    if (found.length) problems[path] = found;
  }
  return problems;
}

/** Pages that draw after their data arrives are checked once they have. */
async function drawn(page: Page, path: string) {
  if (/^\/jobs\/[0-9a-f-]{36}$/.test(path)) await expect(page.getByTestId("job-progress-chart").locator("canvas").first()).toBeVisible();
  if (path === "/admin") await expect(page.getByTestId("history-chart-0").locator("canvas").first()).toBeVisible();
  if (path === "/account/credits") await expect(page.getByRole("table", { name: "Statement" })).toBeVisible();
  if (path.includes("decisions")) await expect(page.getByTestId("decision").first()).toBeVisible();
}

test("every page, for every role, has no serious accessibility violation and fits a phone", async ({ page, browser }) => {
  test.setTimeout(600_000);

  const signedOut = await check(page, ["/", "/signin", "/signup", "/no-such-page"]);

  // A consumer with a finished job (its page, its decisions, its statement).
  await signUp(page, "Axe Consumer", `axe-consumer-${Date.now()}@example.test`, "consumer");
  await submitMonteCarlo(page, { tasks: 4, name: "Checked for contrast", benefit: 20 });
  const job = new URL(page.url()).pathname;
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 120_000 });
  const consumer = await check(page, ["/jobs", "/jobs/new", job, `${job}/decisions`, "/account", "/account/credits", "/account/confirmed", "/produce"], (p) => drawn(page, p));

  // A producer whose tab has run tasks, then its other pages.
  const producerContext = await browser.newContext();
  const producerPage = await producerContext.newPage();
  await signUp(producerPage, "Axe Producer", `axe-producer-${Date.now()}@example.test`, "producer");
  await startProducing(producerPage);
  // The buyer signs in a context of its own: one context shares its cookies, and the tab must
  // keep calling the market as its producer.
  const buyerContext = await browser.newContext();
  const tasks = await buyerContext.newPage();
  await signUp(tasks, "Axe Buyer", `axe-buyer-${Date.now()}@example.test`, "consumer");
  await submitMonteCarlo(tasks, { tasks: 4, benefit: 20 });
  await expect(tasks.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 120_000 });
  await buyerContext.close();
  const producing = { "/produce (producing)": await violations(producerPage) };
  await producerPage.getByRole("button", { name: "Stop producing" }).click();
  const producer = await check(producerPage, ["/produce", "/account", "/account/credits", "/jobs"]);
  await producerContext.close();

  // The admin's pages.
  const adminContext = await browser.newContext();
  const admin = await adminContext.newPage();
  await signIn(admin, stack().admin!.email, stack().admin!.password);
  const admins = await check(admin, ["/admin", "/admin/decisions"], (p) => drawn(admin, p));
  await adminContext.close();

  const all = Object.fromEntries(Object.entries({ ...signedOut, ...consumer, ...producing, ...producer, ...admins }).filter(([, found]) => found.length > 0));
  expect(all, "pages with serious or critical accessibility violations, or that do not fit a phone").toEqual({});
});

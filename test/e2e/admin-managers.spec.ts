import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { expect, test, type Page } from "./fixtures.ts";
import { signIn, signUp } from "./users.ts";
import { buildWebIfStale, startStack, type Stack } from "../../scripts/stack.ts";
import { freePort, onFreePort } from "../../apps/market-manager/src/net/free-port.ts";
import { startWorker, stopGently, type WorkerProcess } from "../support/processes.ts";

// /admin with several Market Managers (issue 47, items 2 and 6), in a market of its own: two
// managers on one PostgreSQL behind the web app (`MARKET_MANAGERS=2 npm start`'s stack), with the
// launcher's worker and one more, one machine on each manager. The admin sees both managers with
// their machines, jobs, tasks per second and health, moves a machine from one to the other with
// the page's form, sees it listed under the new manager, and looks at one manager's history. Then
// a busy machine: moved, it is listed as draining toward its target, and the admin cancels that.
// (`E2E_STACK=off npx playwright test test/e2e/admin-managers.spec.ts` runs it without the
// shared market.)

test.describe.configure({ mode: "serial" });

let stack: Stack;
let dataDir: string;
let extra: WorkerProcess;

test.beforeAll(async () => {
  test.setTimeout(240_000);
  await buildWebIfStale(console.log);
  const env = { SIGNINS_PER_MINUTE: "1000", AUTH_REQUESTS_PER_MINUTE: "100000", TRUST_ALL_PRODUCERS: "1" };
  ({ stack, dataDir } = await onFreePort(async (marketPort) => {
    const dir = mkdtempSync(join(tmpdir(), "cyclemarket-e2e-managers-"));
    chmodSync(dir, 0o755); // PostgreSQL runs as its own user when we are root
    try {
      return { stack: await startStack({ dataDir: dir, marketPort, webPort: await freePort(), pgPort: await freePort(), workerSlots: 1, managers: 2, log: () => {}, env }), dataDir: dir };
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  }));
  // The launcher's worker registered first, with manager-1; this one is sent to the manager with the most room.
  extra = await startWorker(stack.webUrl, readFileSync(join(dataDir, "local-worker-token"), "utf8").trim(), "second-worker");
});

test.afterAll(async () => {
  await stopGently(extra?.child);
  await stack?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const managerRow = (page: Page, id: string) => page.getByRole("table", { name: "Market Managers" }).getByRole("row", { name: new RegExp(`^${id}\\b`) });
const machineRow = (page: Page, name: string) => page.getByRole("table", { name: "Machines" }).getByRole("row", { name: new RegExp(`^${name} `) });

test("an admin sees both managers and moves a machine from one to the other with the page's form", async ({ browser }) => {
  const context = await browser.newContext({ baseURL: stack.webUrl });
  const page = await context.newPage();
  await signIn(page, stack.admin!.email, stack.admin!.password);
  await page.goto("/admin");

  // Both managers, alive, with their figures: one machine each, no jobs, a rate of tasks settled.
  const managers = page.getByRole("table", { name: "Market Managers" });
  await expect(managers).toBeVisible();
  for (const header of ["Manager", "Health", "Machines", "Jobs", "Tasks/s"]) await expect(managers.getByRole("columnheader", { name: header })).toBeVisible();
  for (const id of ["manager-1", "manager-2"]) {
    await expect(managerRow(page, id).getByRole("cell").nth(1)).toHaveText("alive");
    await expect(managerRow(page, id).getByRole("cell").nth(2)).toHaveText("1");
    await expect(managerRow(page, id).getByRole("cell").nth(3)).toHaveText("0");
    await expect(managerRow(page, id).getByRole("cell").nth(4)).toHaveText(/^\d+(\.\d)?$/);
  }

  // Which manager holds which machine, in the machines table.
  const holderOf = async (name: string) => (await machineRow(page, name).getByTestId("machine-manager").innerText()).trim();
  await expect(machineRow(page, "local-worker").getByTestId("machine-manager")).toHaveText(/^manager-\d$/);
  const from = await holderOf("local-worker");
  const to = from === "manager-1" ? "manager-2" : "manager-1";
  await expect(machineRow(page, "second-worker").getByTestId("machine-manager")).toHaveText(to);

  // Move the local worker's machine with the form: how many, from which manager, to which.
  const form = page.getByRole("form", { name: "Move machines between managers" });
  await form.getByLabel("How many machines to move").fill("1");
  await form.getByLabel("Move from manager").selectOption(from);
  await form.getByLabel("Move to manager").selectOption(to);
  await form.getByRole("button", { name: "Move machines" }).click();
  await expect(form.getByRole("status")).toHaveText(`Moved 1 machine to ${to}; their workers follow.`);

  // Listed under the new manager; the manager it left shows none until the fair share hands it the other machine.
  await expect(machineRow(page, "local-worker").getByTestId("machine-manager")).toHaveText(to);
  await expect(managerRow(page, to).getByRole("cell").nth(2)).not.toHaveText("0");
  // Pinned: the fair share hands the machine the admin did not place, and leaves this one.
  await expect(machineRow(page, "second-worker").getByTestId("machine-manager")).toHaveText(from, { timeout: 60_000 });
  await expect(machineRow(page, "local-worker").getByTestId("machine-manager")).toHaveText(to);

  // The history of one manager, rather than the whole market's.
  await page.getByLabel("Whose history").selectOption(to);
  await expect(page.getByText(`the Market Manager ${to}'s machines, tasks and decisions`)).toBeVisible();
  await context.close();
});

test("a busy machine moved from the page drains, is listed with its target, and the admin cancels the move", async ({ browser }) => {
  // A long job, submitted through the web app to manager-1 (named, as a quote's manager is), which runs it on its machine.
  const buyer = await browser.newContext({ baseURL: stack.webUrl });
  const buyerPage = await buyer.newPage();
  await signUp(buyerPage, "Drain Buyer", "drain-buyer@example.test", "consumer", () => join(dataDir, "outbox.jsonl"));
  const res = await buyerPage.request.post("/api/trpc/jobs.submit", {
    data: { name: "long pi", source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1_000_000_000 }, taskCount: 1 }, benefit: { kind: "constant", value: 50 }, manager: "manager-1" },
  });
  expect(res.ok()).toBe(true);
  await buyer.close();

  const context = await browser.newContext({ baseURL: stack.webUrl });
  const page = await context.newPage();
  await signIn(page, stack.admin!.email, stack.admin!.password);
  await page.goto("/admin");
  const busy = page.getByRole("table", { name: "Machines" }).getByRole("row").filter({ has: page.getByTestId("machine-manager").getByText("manager-1", { exact: true }) });
  await expect(busy).toHaveCount(1);
  await expect(busy.getByRole("cell").nth(9)).toHaveText("1");
  const name = (await busy.locator("bdi").innerText()).trim();

  const form = page.getByRole("form", { name: "Move machines between managers" });
  await form.getByLabel("Move from manager").selectOption("manager-1");
  await form.getByLabel("Move to manager").selectOption("manager-2");
  await form.getByRole("button", { name: "Move machines" }).click();
  await expect(form.getByRole("status")).toHaveText("1 busy machine is draining toward manager-2: no new work, and it moves once its running tasks end.");

  // Listed as draining, with where it goes, in the managers' card and the machines table.
  const draining = page.getByRole("list", { name: "Draining machines" }).getByRole("listitem");
  await expect(draining).toHaveCount(1);
  await expect(draining).toContainText(name);
  await expect(draining).toContainText("manager-1 → manager-2");
  await expect(machineRow(page, name).getByTestId("machine-manager")).toContainText("draining to manager-2");

  // Cancelled: no longer draining; it stays with manager-1 and runs its task there.
  await draining.getByRole("button", { name: `Cancel move of ${name}` }).click();
  await expect(page.getByRole("list", { name: "Draining machines" })).toHaveCount(0);
  await expect(machineRow(page, name).getByTestId("machine-manager")).toHaveText("manager-1");
  await context.close();
});

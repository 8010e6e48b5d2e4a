import { readFileSync } from "node:fs";
import { expect, test } from "./fixtures.ts";
import { signUp } from "./users.ts";

// An example job's result is the consumer's to keep and to run again: the Mandelbrot picture
// downloads as a PNG, its numbers as JSON, and "Run again" submits the same job, which the market
// knows again as the example by its module (its page draws the picture again). The job page gives
// one estimate of completion, the quoted one beside it.

test("an example job downloads as PNG and JSON and runs again as the same example", async ({ page }) => {
  test.setTimeout(300_000);
  await signUp(page, "Example User", `examples-${Date.now()}@example.test`, "consumer");
  await page.goto("/jobs/new");
  await page.getByLabel("Example").selectOption({ label: "Mandelbrot tiles" });
  await page.getByLabel("Job name").fill("Picture to keep");
  await page.getByLabel("Benefit", { exact: true }).fill("20");
  await page.getByRole("button", { name: "Submit job" }).click();
  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
  const first = page.url();
  // While it runs, one live estimate; the quote's is kept as "quoted" (on the decision and in Timing).
  await expect(page.getByTestId("job-quoted-completion")).not.toHaveText("—");
  await expect(page.getByTestId("decision")).toContainText("Quoted completion");
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 180_000 });
  await expect(page.getByTestId("job-eta")).toHaveCount(0);

  const png = page.waitForEvent("download");
  await page.getByTestId("download-png").click();
  const picture = await png;
  expect(picture.suggestedFilename()).toMatch(/^picture-to-keep-[0-9a-f]{8}\.png$/);
  expect(readFileSync((await picture.path())!).subarray(1, 4).toString("latin1")).toBe("PNG");

  const json = page.waitForEvent("download");
  await page.getByTestId("download-json").click();
  const numbers = JSON.parse(readFileSync((await (await json).path())!, "utf8")) as { kind: string; width: number; coveredPixels: number };
  expect(numbers.kind).toBe("mandelbrot");
  expect(numbers.coveredPixels).toBe(numbers.width * numbers.width);

  await page.getByTestId("run-again").click();
  await expect(page.getByLabel("The job file")).toHaveValue(/"sha256"/);
  await page.getByRole("button", { name: "Submit job file" }).click();
  await page.waitForURL((url) => /\/jobs\/[0-9a-f-]{36}$/.test(url.pathname) && url.href !== first);
  await expect(page.getByRole("heading", { name: "Picture to keep" })).toBeVisible();
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 180_000 });
  await expect(page.getByTestId("mandelbrot-canvas")).toBeVisible();
});

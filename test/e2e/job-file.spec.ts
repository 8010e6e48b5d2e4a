import { readFileSync } from "node:fs";
import { expect, test } from "./fixtures.ts";
import { BYTEPATTERN_WASM, bytepatternOutput } from "../support/bytepattern.ts";
import { untar } from "../support/tar.ts";
import { signUp } from "./users.ts";

// A consumer who has a job file and a module, not a form: both go onto /jobs/new's job-file tab,
// the market's Node worker runs the C example (binary stdout), and "Download all" gives back
// every task's bytes and the manifest in one archive.

const COUNT = 5;
const STDIN = "from the page\n";

test("a job file and its module submitted through the page; the archive holds every output byte for byte", async ({ page }) => {
  await signUp(page, "Job File User", `jobfile-${Date.now()}@example.test`);
  await page.goto("/jobs/new");
  await page.getByRole("tab", { name: "Use a job file" }).click();
  const jobFile = {
    name: "byte patterns from the page",
    module: "bytepattern.wasm",
    // Worth well over its cost even when a loaded machine benchmarks slow (the cost follows its speed).
    benefit: { kind: "constant", value: 100 },
    workPerTask: 0.05,
    limits: { memoryMb: 16, wallSeconds: 10 },
    tasks: { count: COUNT, args: ["{i}"], stdin: STDIN },
  };
  await page.getByLabel("Job file, module and input files").setInputFiles([
    { name: "patterns.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(jobFile, null, 2)) },
    { name: "bytepattern.wasm", mimeType: "application/wasm", buffer: readFileSync(BYTEPATTERN_WASM) },
  ]);
  // The dropped job file replaces the example in the editor, and the module is listed.
  await expect(page.getByLabel("The job file")).toHaveValue(/byte patterns from the page/);
  await expect(page.getByLabel("Files added")).toContainText("bytepattern.wasm");
  await page.getByRole("button", { name: "Submit job file" }).click();
  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 120_000 });
  // Each output says which task, its arguments, how long it ran and where, each labelled.
  await expect(page.getByLabel("Task outputs").locator("li").filter({ hasText: /^Task 3 · args 3 · ran .+ · on \S/ })).toHaveCount(1);

  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("download-all").click()]);
  const files = untar(readFileSync((await download.path())!));
  expect([...files.keys()].filter((n) => n.endsWith(".out")).sort()).toEqual(Array.from({ length: COUNT }, (_, i) => `${i}.out`).sort());
  for (let i = 0; i < COUNT; i++) expect(files.get(`${i}.out`)!.equals(bytepatternOutput(i, Buffer.from(STDIN))), `task ${i}'s output`).toBe(true);
  const manifest = JSON.parse(files.get("results.json")!.toString("utf8")) as { tasks: { index: number; exitCode: number }[] };
  expect(manifest.tasks.map((t) => [t.index, t.exitCode])).toEqual(Array.from({ length: COUNT }, (_, i) => [i, 0]));

  // "Run again" opens the same job file, its module named by hash: edited, it runs with no upload.
  await page.getByTestId("run-again").click();
  await page.waitForURL(/\/jobs\/new\?again=/);
  const editor = page.getByLabel("The job file");
  await expect(editor).toHaveValue(/"sha256": "[0-9a-f]{64}"/);
  const again = JSON.parse(await editor.inputValue()) as { name: string; tasks: unknown[] };
  expect(again.tasks).toHaveLength(COUNT);
  expect(again.tasks[3]).toEqual({ args: ["3"], stdin: STDIN });
  again.name = "byte patterns, again";
  again.tasks = again.tasks.slice(0, 2);
  await editor.fill(JSON.stringify(again, null, 2));
  await page.getByRole("button", { name: "Submit job file" }).click();
  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 120_000 });
  await expect(page.getByText("2 of 2 tasks have output")).toBeVisible();

  // The short id the statements and the CLI show, typed into the address, opens the same job.
  const full = new URL(page.url()).pathname.split("/").pop()!;
  await page.goto(`/jobs/${full.slice(-8).toUpperCase()}`);
  await page.waitForURL(`**/jobs/${full}`);
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i);
  await page.goto(`/jobs/${full.slice(-8) === "00000000" ? "11111111" : "00000000"}`);
  await expect(page.getByText(/None of your latest jobs has the short id/)).toBeVisible();
  await page.goto("/jobs/not-a-job");
  await expect(page.getByText(/not-a-job is not a job.s id/)).toBeVisible();
});

test("the simple form quotes arguments, takes stdin for all or from a file, generates tasks, and shows the job file", async ({ page }) => {
  await signUp(page, "Form User", `formfile-${Date.now()}@example.test`);
  await page.goto("/jobs/new");
  await page.getByRole("radio", { name: /upload/i }).check({ force: true });
  await page.getByLabel("Module (.wasm)").setInputFiles(BYTEPATTERN_WASM);
  await page.getByLabel("Job file, module or stdin files").setInputFiles([{ name: "in.txt", mimeType: "text/plain", buffer: Buffer.from("from a file\n") }]);
  await page.getByLabel("Task arguments (one task per line)").fill(`0 "two words"\n1 < in.txt`);
  await page.getByLabel("Stdin of every task").fill("for all\n");
  await page.getByLabel("Job name").fill("Two patterns");
  const shown = page.getByTestId("form-job-file").locator("pre");
  const json = () => shown.textContent().then((t) => JSON.parse(t!) as Record<string, unknown>);
  expect(await json()).toMatchObject({
    name: "Two patterns",
    module: "bytepattern.wasm",
    replicas: 1,
    tasks: [{ args: ["0", "two words"], stdin: "for all\n" }, { args: ["1"], stdin: { file: "in.txt" } }],
  });

  // A shell operator is not an argument: the form says so with the line.
  await page.getByLabel("Task arguments (one task per line)").fill("0 | 1");
  await expect(page.getByText(/Line 1: "\|" is not an argument/)).toBeVisible();
  await page.getByLabel("Task arguments (one task per line)").fill(`0 "two words"\n1 < in.txt`);

  // Generated tasks: a count and {i}.
  await page.getByRole("radio", { name: "Generated tasks" }).check();
  await page.getByLabel("Number of tasks").last().fill("3");
  await page.getByLabel("Arguments of every task").fill("{i} 'x y'");
  await page.getByLabel("Stdin of every task").fill("line {i}");
  expect((await json()).tasks).toEqual({ count: 3, args: ["{i}", "x y"], stdin: "line {i}" });
  await page.getByRole("button", { name: "Submit job" }).click();
  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("job-status")).toHaveText(/completed/i, { timeout: 120_000 });
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("download-all").click()]);
  const files = untar(readFileSync((await download.path())!));
  for (let i = 0; i < 3; i++) expect(files.get(`${i}.out`)!.equals(bytepatternOutput(i, Buffer.from(`line ${i}`))), `task ${i}'s output`).toBe(true);
});

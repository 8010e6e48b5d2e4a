// `npm run -s bench:dashboard -- --machines 1000 [--seconds 15] [--lease-timeout-ms 30000] [--json]`
// Registers N simulated machines with a market of its own (its own ports and database), each
// heartbeating over the real protocol, opens /admin in Chromium as the admin, and measures how
// often the dashboard shows new figures and the longest task the page's main thread ran
// (PerformanceObserver 'longtask': anything over 50 ms) while it stays open.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawnSync } from "node:child_process";
import { chromium } from "playwright-core";
import { buildWebIfStale, startStack } from "../stack.ts";
import { clientFor, freePort } from "../../test/support/market.ts";

const { values: args } = parseArgs({
  options: { machines: { type: "string", default: "1000" }, seconds: { type: "string", default: "15" }, json: { type: "boolean", default: false }, verbose: { type: "boolean", default: false }, "lease-timeout-ms": { type: "string", default: "30000" } },
});
const machines = Number(args.machines);
const seconds = Number(args.seconds);
if (!Number.isInteger(machines) || machines < 1 || machines > 10_000) throw new Error("--machines must be a whole number from 1 to 10,000");
if (!(seconds >= 5 && seconds <= 600)) throw new Error("--seconds must be between 5 and 600");
// The market's own default: machines heartbeat at a third of it, as real workers do.
const leaseTimeoutMs = Number(args["lease-timeout-ms"]);
if (!Number.isInteger(leaseTimeoutMs) || leaseTimeoutMs < 1000 || leaseTimeoutMs > 3_600_000) throw new Error("--lease-timeout-ms must be a whole number from 1,000 to 3,600,000");
const say = (line: string) => (args.json ? process.stderr : process.stdout).write(`${line}\n`);

/** Runs `fn` over `items` with at most `limit` at once. */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

// The build prints on stdout; with --json only the figures may go there.
if (args.json) {
  const build = spawnSync(process.execPath, ["--import", "tsx", "-e", "import('./scripts/stack.ts').then((m) => m.buildWebIfStale(console.error))"], { stdio: ["ignore", 2, 2] });
  if (build.status !== 0) throw new Error("the web app did not build");
} else {
  await buildWebIfStale(say);
}
const dataDir = mkdtempSync(join(tmpdir(), "cyclemarket-bench-"));
chmodSync(dataDir, 0o755); // PostgreSQL runs as its own user when we are root
const stack = await startStack({
  dataDir,
  marketPort: await freePort(),
  webPort: await freePort(),
  pgPort: await freePort(),
  workerSlots: 0,
  log: args.verbose ? say : () => {},
  env: { SIGNUPS_PER_ADDRESS: "100", SIGNUPS_PER_NETWORK: "100", SIGNINS_PER_MINUTE: "100", AUTH_REQUESTS_PER_MINUTE: "100000" },
  leaseTimeoutMs,
});
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
let heartbeats: NodeJS.Timeout | undefined;
// Stopped from outside (Ctrl-C, a time limit): the market, its database and the web app go too.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void browser.close().finally(() => stack.stop().finally(() => process.exit(130))));
}
try {
  // The machines: one producer's token (the admin is a producer too), N registrations, then
  // heartbeats at the interval the market asks for.
  const { email, password } = stack.admin!;
  const signIn = await fetch(`${stack.marketUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: stack.webUrl },
    body: JSON.stringify({ email, password }),
  });
  if (!signIn.ok) throw new Error(`sign-in failed: ${signIn.status} ${await signIn.text()}`);
  const cookie = signIn.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const admin = clientFor(stack.marketUrl, { cookie, origin: stack.webUrl });
  const { token } = await admin.account.tokens.create.mutate({ name: "bench", scopes: ["produce"] });
  const worker = clientFor(stack.marketUrl, { authorization: `Bearer ${token}` });
  const ids: string[] = [];
  let interval = 10_000;
  // Heartbeats start with the first registration (registering a thousand takes longer than the
  // lease timeout), spread over the interval as independent machines' would be.
  let turn = 0;
  heartbeats = setInterval(() => {
    const perTick = Math.ceil(ids.length / (interval / 100));
    for (let k = 0; k < perTick; k++) {
      const id = ids[turn++ % ids.length]!;
      worker.worker.heartbeat.mutate({ machineId: id, leaseIds: [] }).catch((e: unknown) => say(`heartbeat failed: ${String(e)}`));
    }
  }, 100);
  const started = Date.now();
  await pool(
    Array.from({ length: machines }, (_, i) => i),
    16,
    async (i) => {
      const r = await worker.worker.register.mutate({
        name: `sim-${String(i).padStart(4, "0")}`,
        kind: "opportunistic",
        slots: 1 + (i % 8),
        speed: 0.5 + (i % 5) / 4,
        memoryPerSlotMb: 512,
        bandwidthBytesPerSecond: 1e7,
        pricePerSecond: 0.01 * (1 + (i % 10)),
        userAgent: "bench",
      });
      ids.push(r.machineId);
      interval = r.heartbeatIntervalMs;
    },
  );
  say(`registered ${ids.length} machines in ${((Date.now() - started) / 1000).toFixed(1)} s; heartbeating every ${interval} ms`);

  const page = await browser.newPage();
  await page.goto(`${stack.webUrl}/signin`);
  await page.getByLabel("Email").fill(stack.admin!.email);
  await page.getByLabel("Password").fill(stack.admin!.password);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.getByTestId("signed-in-user").waitFor();
  await page.goto(`${stack.webUrl}/admin`);
  await page.getByTestId("admin-active-machines").getByText(String(machines.toLocaleString("en-US"))).waitFor({ timeout: 60_000 });
  await page.getByRole("table", { name: "Machines" }).waitFor({ timeout: 60_000 });
  // Steady state: the page has loaded; from now on every update and every long task counts.
  const result = await page.evaluate(async (ms) => {
    let longest = 0;
    const tasks = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) longest = Math.max(longest, e.duration);
    });
    tasks.observe({ type: "longtask" });
    let updates = 0;
    const pulse = document.querySelector('[data-testid="admin-pulse"]')!;
    const seen = new MutationObserver(() => (updates += 1));
    seen.observe(pulse, { attributes: true, attributeFilter: ["data-updated"] });
    await new Promise((resolve) => setTimeout(resolve, ms));
    tasks.disconnect();
    seen.disconnect();
    return { updates, longest };
  }, seconds * 1000);
  const figures = { machines, updatesPerSecond: Math.round((result.updates / seconds) * 100) / 100, longestTaskMs: Math.round(result.longest) };
  if (args.json) console.log(JSON.stringify(figures));
  else say(`machines ${figures.machines}: ${figures.updatesPerSecond} updates/s, longest task ${figures.longestTaskMs} ms over ${seconds} s`);
} finally {
  clearInterval(heartbeats);
  await browser.close();
  await stack.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

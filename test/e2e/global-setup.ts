import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { buildDownloadsIfStale, buildWebIfStale, startStack, root } from "../../scripts/stack.ts";
import { freePort, onFreePort } from "../../apps/market-manager/src/net/free-port.ts";

/**
 * What global setup hands the specs, through the environment their workers inherit: the web
 * app's address (playwright.config.ts's baseURL), the stack's file (users.ts) and the socket that
 * stops and starts its Market Manager (control.ts). Each run has its own, so runs never share.
 */
export const E2E_ENV = { webUrl: "E2E_WEB_URL", stackFile: "E2E_STACK_FILE", controlSocket: "E2E_CONTROL_SOCKET" } as const;

export function fromSetup(name: keyof typeof E2E_ENV): string {
  const value = process.env[E2E_ENV[name]];
  if (!value) throw new Error(`${E2E_ENV[name]} is not set: the end-to-end specs run under test/e2e/global-setup.ts (npx playwright test)`);
  return value;
}

/**
 * A fresh market for the end-to-end run: new database, new admin, a Node worker with one slot,
 * on free ports chosen now (below the ephemeral range; another set when one is taken before its
 * server binds it), so two runs, or a run on a busy machine, cannot clash.
 */
export default async function globalSetup() {
  // A spec that needs no market (sandbox-pipes.spec.ts) can run alone without starting one.
  if (process.env.E2E_STACK === "off") return;
  const logs: string[] = [];
  const log = (line: string) => {
    logs.push(line);
    if (process.env.E2E_VERBOSE) console.log(line);
  };
  await buildWebIfStale(console.log);
  await buildDownloadsIfStale();
  // Every test signs up from this host, and the scenarios were written for 1,000 starting credits.
  // One browser plays every user from one address: the per-address limits are tested in test/security.
  const env = { SIGNUPS_PER_ADDRESS: "1000", SIGNUPS_PER_NETWORK: "1000", STARTING_CREDITS: "1000", SIGNINS_PER_MINUTE: "1000", AUTH_REQUESTS_PER_MINUTE: "100000", TRUST_ALL_PRODUCERS: "1" };
  // A new data folder per attempt: the admin's password is printed by a database's first start only.
  const { stack, dataDir } = await onFreePort(
    async (webPort) => {
      const dataDir = mkdtempSync(join(tmpdir(), "cyclemarket-e2e-"));
      chmodSync(dataDir, 0o755); // PostgreSQL runs as its own user when we are root
      try {
        const stack = await startStack({ dataDir, marketPort: await freePort(), webPort, pgPort: await freePort(), workerSlots: 1, log, env });
        return { stack, dataDir };
      } catch (e) {
        rmSync(dataDir, { recursive: true, force: true });
        throw e;
      }
    },
    { log: console.log },
  );
  log(`end-to-end market: web app ${stack.webUrl}, Market Manager ${stack.marketUrl}, data ${dataDir}`);
  const stackFile = join(dataDir, "e2e-stack.json");
  const controlSocket = join(dataDir, "e2e-control.sock");
  writeFileSync(stackFile, JSON.stringify({ webUrl: stack.webUrl, marketUrl: stack.marketUrl, admin: stack.admin, outbox: join(dataDir, "outbox.jsonl") }));
  const control = createServer((req, res) => {
    const action = req.method === "POST" && req.url === "/manager/stop" ? stack.stopManager() : req.method === "POST" && req.url === "/manager/start" ? stack.startManager() : null;
    if (!action) return void res.writeHead(404).end();
    action.then(
      () => res.writeHead(204).end(),
      (e: unknown) => res.writeHead(500).end(e instanceof Error ? e.message : String(e)),
    );
  });
  await new Promise<void>((resolve) => control.listen(controlSocket, resolve));
  Object.assign(process.env, { [E2E_ENV.webUrl]: stack.webUrl, [E2E_ENV.stackFile]: stackFile, [E2E_ENV.controlSocket]: controlSocket });
  return async () => {
    await new Promise((resolve) => control.close(resolve));
    await stack.stop();
    mkdirSync(join(root, ".tmp"), { recursive: true });
    writeFileSync(join(root, ".tmp/e2e-stack.log"), logs.join("\n"));
    rmSync(dataDir, { recursive: true, force: true });
  };
}

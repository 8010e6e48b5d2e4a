import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { buildWebIfStale, startStack, root } from "../../scripts/stack.ts";

export const STACK_FILE = join(root, ".tmp/e2e-stack.json");
/** Specs stop and start the Market Manager through this socket (test/e2e/control.ts): the stack lives in this process. */
export const CONTROL_SOCKET = join(root, ".tmp/e2e-control.sock");

/** A fresh market for the end-to-end run: new database, new admin, a Node worker with one slot. */
export default async function globalSetup() {
  // A spec that needs no market (sandbox-pipes.spec.ts) can run alone without starting one.
  if (process.env.E2E_STACK === "off") return;
  const logs: string[] = [];
  const log = (line: string) => {
    logs.push(line);
    if (process.env.E2E_VERBOSE) console.log(line);
  };
  await buildWebIfStale(console.log);
  const dataDir = mkdtempSync(join(tmpdir(), "cyclemarket-e2e-"));
  chmodSync(dataDir, 0o755); // PostgreSQL runs as its own user when we are root
  // Every test signs up from this host, and the scenarios were written for 1,000 starting credits.
  // One browser plays every user from one address: the per-address limits are tested in test/security.
  const env = { SIGNUPS_PER_ADDRESS: "1000", SIGNUPS_PER_NETWORK: "1000", STARTING_CREDITS: "1000", SIGNINS_PER_MINUTE: "1000", AUTH_REQUESTS_PER_MINUTE: "100000" };
  const stack = await startStack({ dataDir, marketPort: 4900, webPort: 3900, pgPort: 54939, workerSlots: 1, log, env });
  mkdirSync(join(root, ".tmp"), { recursive: true });
  const outbox = join(dataDir, "outbox.jsonl");
  writeFileSync(STACK_FILE, JSON.stringify({ webUrl: stack.webUrl, marketUrl: stack.marketUrl, admin: stack.admin, outbox }));
  rmSync(CONTROL_SOCKET, { force: true });
  const control = createServer((req, res) => {
    const action = req.method === "POST" && req.url === "/manager/stop" ? stack.stopManager() : req.method === "POST" && req.url === "/manager/start" ? stack.startManager() : null;
    if (!action) return void res.writeHead(404).end();
    action.then(
      () => res.writeHead(204).end(),
      (e: unknown) => res.writeHead(500).end(e instanceof Error ? e.message : String(e)),
    );
  });
  await new Promise<void>((resolve) => control.listen(CONTROL_SOCKET, resolve));
  return async () => {
    await new Promise((resolve) => control.close(resolve));
    await stack.stop();
    writeFileSync(join(root, ".tmp/e2e-stack.log"), logs.join("\n"));
    rmSync(dataDir, { recursive: true, force: true });
  };
}

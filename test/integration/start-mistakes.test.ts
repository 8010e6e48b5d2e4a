import { afterAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Output, exit, root, startManager, tempDir } from "../support/processes.ts";
import { freePort } from "../support/market.ts";

// A newcomer's mistakes in the settings of `npm start`: each stops the start with one sentence
// naming what to change, never a stack trace.

const dirs: string[] = [];
const dataDir = () => {
  const dir = tempDir("cyclemarket-start-mistake-");
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("npm start's settings", () => {
  for (const [variable, value] of [
    ["MARKET_PORT", "abc"],
    ["PORT", "3000.5"],
    ["MARKET_PG_PORT", "70000"],
  ] as const) {
    it(`names ${variable}=${value} as not a port, before anything starts`, async () => {
      const env: NodeJS.ProcessEnv = { ...process.env, MARKET_DATA_DIR: dataDir(), [variable]: value };
      delete env.DATABASE_URL;
      const start = spawn(process.execPath, ["--import", "tsx", join(root, "scripts/start.ts")], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
      const out = new Output(start, "start");
      await exit(start);
      expect(start.exitCode).toBe(1);
      const said = out.lines.join("\n");
      expect(said).toContain(`Cycle Market did not start: ${variable} is a port number from`);
      expect(said).toContain(JSON.stringify(value));
      expect(said).not.toMatch(/\n\s+at |NaN/);
    });
  }

  it("a DATABASE_URL nobody answers at: the Market Manager says so in words and exits", async () => {
    // Free: nobody listens on it.
    const port = await freePort();
    const started = startManager({ dataDir: dataDir(), databaseUrl: `postgresql://market:secret@127.0.0.1:${port}/market`, leaseTimeoutMs: 30_000 });
    const refused = await started.then(
      () => null,
      (e: Error) => e,
    );
    expect(refused?.message).toContain(`could not start: Can't reach database server at \`127.0.0.1:${port}\``);
    expect(refused?.message).not.toMatch(/\n\s+at |wasm-function/);
  }, 60_000);
});

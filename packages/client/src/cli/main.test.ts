import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXIT, main, type Io } from "./main.ts";

// What a newcomer typing a wrong command line sees: one line saying what is wrong, the right exit
// status, and never a stack trace. None of these needs a market: the mistakes are found before
// anything is sent, or the market is a port nobody listens on.

const dir = mkdtempSync(join(tmpdir(), "cyclemarket-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const io: Io = { out: (t) => void (out += t), err: (t) => void (err += t), env: { XDG_CONFIG_HOME: join(dir, "config") }, tty: false };
  const code = await main(argv, io);
  return { code, out, err };
}

/** A local port with nobody listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("the cyclemarket command line's mistakes", () => {
  it("names an unknown command as such", async () => {
    const r = await run(["frobnicate"]);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain('Unknown command "frobnicate"');
    expect(r.err).not.toContain("needs a job id");
  });

  it("asks for an http(s) URL instead of failing to fetch", async () => {
    const r = await run(["status", "abcdef12", "--url", "localhost:3000", "--token", "t"]);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toMatch(/must start with http:\/\/ or https:\/\//);
    expect(r.err).not.toContain("Usage:");
  });

  it("says which address it could not reach, and why", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const r = await run(["status", "abcdef12", "--url", url, "--token", "t"]);
    expect(r.code).toBe(EXIT.unreachable);
    expect(r.err).toContain("ECONNREFUSED");
    expect(r.err).toContain(url);
  });

  it("refuses an --out it cannot write before it sends anything", async () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    const url = `http://127.0.0.1:${await closedPort()}`;
    for (const argv of [
      ["results", "abcdef12", "--out", join(file, "out")],
      ["submit", "job.json", "--out", file],
    ]) {
      const r = await run([...argv, "--url", url, "--token", "t"]);
      expect(r.code, r.err).toBe(EXIT.usage);
      expect(r.err).toContain("a file is in the way");
      expect(r.err).not.toContain("Cannot reach"); // found before the market was asked
    }
  });
});

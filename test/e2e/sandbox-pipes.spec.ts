// The browser producer's sandbox in Chromium: the same Web Worker pool the /produce page uses
// runs C programs built with wasi-libc. Their stdout must be a pipe (not a terminal), so
// unmodified bzip2, gzip and xz compress stdin to stdout, with the bytes Node's own WASI host
// gives, and decompress it again.
// Needs no market: `E2E_STACK=off npx playwright test test/e2e/sandbox-pipes.spec.ts` runs it alone.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { build } from "esbuild";
import { expect, test } from "@playwright/test";
import { root } from "../../scripts/stack.ts";
import { runInReference, wasiProgram } from "../../apps/worker-runtime/src/testing/wasi-programs.ts";
import { LOOP_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";

const runtime = join(root, "apps/worker-runtime/src");

// The page script: a browser pool whose Web Workers load the sandbox's worker entry.
const PAGE_ENTRY = `
import { createBrowserPool } from ${JSON.stringify(join(runtime, "browser.ts"))};
const pool = createBrowserPool({ slots: 1, createWorker: () => new Worker("/worker.js", { type: "module" }) });
const fromBase64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
globalThis.runTask = async (module, args, stdin, memoryPages, wallMs) => {
  const bytes = fromBase64(module);
  const hash = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
  const r = await pool.run({ moduleHash: hash, module: bytes, args, stdin: fromBase64(stdin), seed: "e2e", limits: { wallMs, memoryPages, outputBytes: 1 << 20 } });
  let binary = "";
  for (const b of r.stdout) binary += String.fromCharCode(b);
  return { exitCode: r.exitCode, error: r.error ?? null, stdout: btoa(binary), stderr: new TextDecoder().decode(r.stderr) };
};
`;

async function bundle(options: { stdin: { contents: string; resolveDir: string } } | { entryPoints: string[] }): Promise<string> {
  const out = await build({ ...options, bundle: true, format: "esm", platform: "browser", target: "chrome120", write: false, logLevel: "warning" });
  return out.outputFiles[0]!.text;
}

let server: Server;
let baseUrl = "";

test.beforeAll(async () => {
  const files: Record<string, string> = {
    "/": "<!doctype html><title>sandbox</title>",
    "/page.js": await bundle({ stdin: { contents: PAGE_ENTRY, resolveDir: runtime } }),
    "/worker.js": await bundle({ entryPoints: [join(runtime, "browser-worker.ts")] }),
  };
  server = createServer((req, res) => {
    const body = files[req.url ?? ""];
    res.writeHead(body === undefined ? 404 : 200, { "content-type": req.url === "/" ? "text/html" : "text/javascript" });
    res.end(body ?? "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

test("the browser sandbox gives C programs pipes for stdout, so bzip2, gzip and xz compress stdin to stdout; a slot stopped at its wall time goes on", async ({ page }) => {
  await page.goto(`${baseUrl}/`);
  await page.addScriptTag({ url: "/page.js", type: "module" });
  await page.waitForFunction(() => "runTask" in globalThis);
  type Result = { exitCode: number; error: unknown; stdout: string; stderr: string };
  const runModule = (module: Uint8Array, args: string[], stdin: Uint8Array, memoryPages = 1024, wallMs = 30_000) =>
    page.evaluate(([m, a, s, p, w]) => (globalThis as unknown as { runTask: (...x: unknown[]) => Promise<Result> }).runTask(m, a, s, p, w), [
      base64(module),
      args,
      base64(stdin),
      memoryPages,
      wallMs,
    ] as const);
  const run = (name: string, args: string[], stdin: Uint8Array, memoryPages = 1024) => runModule(wasiProgram(name), args, stdin, memoryPages);

  const streams = await run("streams", [], new TextEncoder().encode("browser stdin"));
  expect(streams.error).toBeNull();
  const text = Buffer.from(streams.stdout, "base64").toString();
  for (const fd of [0, 1, 2]) expect(text).toContain(`fd${fd} filetype 6 read 1 write 1 seek 0 tell 0 isatty 0`);
  expect(text).toContain("stdin bytes: 13");
  expect(streams.stderr).toBe("to stderr\n");

  const input = new TextEncoder().encode("compress me in the browser\n".repeat(2000));
  // xz's default preset needs about 94 MiB to compress.
  for (const [name, memoryPages] of [["bzip2", 1024], ["gzip", 1024], ["xz", 2048]] as const) {
    const packed = await run(name, ["-c"], input, memoryPages);
    expect(packed.error, name).toBeNull();
    expect(packed.stderr, name).toBe("");
    expect(packed.exitCode, name).toBe(0);
    const bytes = Buffer.from(packed.stdout, "base64");
    expect(bytes, name).toEqual(Buffer.from(runInReference(name, { args: ["-c"], stdin: input }).bytes));
    const unpacked = await run(name, ["-d", "-c"], bytes, memoryPages);
    expect(unpacked.exitCode, name).toBe(0);
    expect(Buffer.from(unpacked.stdout, "base64"), name).toEqual(Buffer.from(input));
  }

  // A task stopped at its wall time: the slot goes on at once with the pool's spare worker.
  const stopped = await runModule(wat(LOOP_WAT), [], new Uint8Array(0), 16, 300);
  expect(stopped.error).toMatchObject({ code: "timeout" });
  const after = await run("streams", [], new TextEncoder().encode("after a timeout"));
  expect(after.error).toBeNull();
  expect(Buffer.from(after.stdout, "base64").toString()).toContain("stdin bytes: 15");
});

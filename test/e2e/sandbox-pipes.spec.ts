// The browser producer's sandbox in Chromium: the same Web Worker pool the /produce page uses
// runs C programs built with wasi-libc. Their stdout must be a pipe (not a terminal), so an
// unmodified bzip2 compresses stdin to stdout, with the bytes Node's own WASI host gives.
// Needs no market: `E2E_STACK=off npx playwright test test/e2e/sandbox-pipes.spec.ts` runs it alone.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { build } from "esbuild";
import { expect, test } from "@playwright/test";
import { root } from "../../scripts/stack.ts";
import { runInReference, wasiProgram } from "../../apps/worker-runtime/src/testing/wasi-programs.ts";

const runtime = join(root, "apps/worker-runtime/src");

// The page script: a browser pool whose Web Workers load the sandbox's worker entry.
const PAGE_ENTRY = `
import { createBrowserPool } from ${JSON.stringify(join(runtime, "browser.ts"))};
const pool = createBrowserPool({ slots: 1, createWorker: () => new Worker("/worker.js", { type: "module" }) });
const fromBase64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
globalThis.runTask = async (module, args, stdin) => {
  const bytes = fromBase64(module);
  const hash = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
  const r = await pool.run({ moduleHash: hash, module: bytes, args, stdin: fromBase64(stdin), seed: "e2e", limits: { wallMs: 30000, memoryPages: 1024, outputBytes: 1 << 20 } });
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

test("the browser sandbox gives a C program pipes for stdout, and bzip2 compresses stdin to stdout", async ({ page }) => {
  await page.goto(`${baseUrl}/`);
  await page.addScriptTag({ url: "/page.js", type: "module" });
  await page.waitForFunction(() => "runTask" in globalThis);
  type Result = { exitCode: number; error: unknown; stdout: string; stderr: string };
  const run = (name: string, args: string[], stdin: Uint8Array) =>
    page.evaluate(([m, a, s]) => (globalThis as unknown as { runTask: (...x: unknown[]) => Promise<Result> }).runTask(m, a, s), [
      base64(wasiProgram(name)),
      args,
      base64(stdin),
    ] as const);

  const streams = await run("streams", [], new TextEncoder().encode("browser stdin"));
  expect(streams.error).toBeNull();
  const text = Buffer.from(streams.stdout, "base64").toString();
  for (const fd of [0, 1, 2]) expect(text).toContain(`fd${fd} filetype 6 read 1 write 1 seek 0 tell 0 isatty 0`);
  expect(text).toContain("stdin bytes: 13");
  expect(streams.stderr).toBe("to stderr\n");

  const input = new TextEncoder().encode("compress me in the browser\n".repeat(2000));
  const bzip2 = await run("bzip2", ["-c"], input);
  expect(bzip2.error).toBeNull();
  expect(bzip2.stderr).toBe("");
  expect(bzip2.exitCode).toBe(0);
  expect(Buffer.from(bzip2.stdout, "base64")).toEqual(Buffer.from(runInReference("bzip2", { args: ["-c"], stdin: input }).bytes));
});

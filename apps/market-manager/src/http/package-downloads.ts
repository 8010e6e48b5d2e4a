import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendRefusal } from "./respond.ts";

// The market's own worker and client as npm package tarballs, so a machine with only Node can run
// `npx --yes URL/downloads/cyclemarket-worker.tgz --url URL --token TOKEN` or
// `npm install URL/downloads/cyclemarket-client.tgz`. Each package packs itself (its
// scripts/pack.mjs, run by `npm ci` and `npm start`) and names the tarball in its exports. Anyone
// may download them: they are the market's public tools, and npm sends no credentials.

const PACKAGES: Record<string, { specifier: string; what: string }> = {
  "/downloads/cyclemarket-worker.tgz": { specifier: "@cyclemarket/worker-runtime/package.tgz", what: "worker package" },
  "/downloads/cyclemarket-client.tgz": { specifier: "@cyclemarket/client/package.tgz", what: "client package" },
};

export const isPackageDownload = (path: string) => Object.hasOwn(PACKAGES, path);

const require = createRequire(import.meta.url);

/** The tarball's bytes as last read, kept while its file is unchanged (npx asks at every start). */
const held = new Map<string, { mtimeMs: number; bytes: Buffer; etag: string }>();

async function tarball(specifier: string) {
  let path: string;
  try {
    path = require.resolve(specifier);
  } catch {
    return null;
  }
  const { mtimeMs } = await stat(path);
  const known = held.get(path);
  if (known?.mtimeMs === mtimeMs) return known;
  const bytes = await readFile(path);
  const fresh = { mtimeMs, bytes, etag: `"${createHash("sha256").update(bytes).digest("base64url")}"` };
  held.set(path, fresh);
  return fresh;
}

/** GET or HEAD of a package tarball; revalidation by ETag answers 304. */
export async function servePackage(req: IncomingMessage, res: ServerResponse, path: string) {
  const { specifier, what } = PACKAGES[path]!;
  const file = await tarball(specifier);
  if (!file) {
    return sendRefusal(res, "NOT_FOUND", { code: "not-found", what }, `The ${what} is not built on this market; run \`npm run build:downloads\` where it runs.`);
  }
  const headers = {
    etag: file.etag,
    // Kept by npm's cache, but asked again each time so a market's new version is what installs.
    "cache-control": "no-cache",
  };
  if (req.headers["if-none-match"] === file.etag) {
    res.writeHead(304, headers);
    return void res.end();
  }
  res.writeHead(200, {
    ...headers,
    "content-type": "application/gzip",
    "content-length": String(file.bytes.length),
    "content-disposition": `attachment; filename="${path.slice("/downloads/".length)}"`,
  });
  res.end(req.method === "HEAD" ? undefined : file.bytes);
}

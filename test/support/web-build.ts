// The web app built when its sources changed, by one test file at a time: files run side by side
// (vitest.config.ts), and two builds in one folder at once would break each other. `npm test`
// builds it before any file runs; this matters when files are run by hand.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildWebIfStale, root } from "../../scripts/stack.ts";

const lock = join(root, ".tmp/web-build.lock");

export async function buildWebOnce() {
  mkdirSync(join(root, ".tmp"), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      // A holder that died (killed mid-build) leaves its lock: it is taken over. (One that has
      // just taken it may not have written its pid yet.)
      const holder = readOr(join(lock, "pid"));
      if (holder === null ? ageMs(lock) > 10_000 : !alive(Number(holder))) rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    writeFileSync(join(lock, "pid"), String(process.pid));
    await buildWebIfStale(() => {});
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function readOr(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function ageMs(path: string) {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function alive(pid: number) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";

/**
 * The first folder on the way to `path` (itself included) that a user other than its owner and
 * group cannot enter, or null when every folder lets them through. As root the embedded
 * PostgreSQL runs as its own user, which needs exactly that to reach its binaries and its data.
 */
export function shutOutFolder(path: string): { dir: string; mode: number } | null {
  let found: { dir: string; mode: number } | null = null;
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    let mode: number | null = null;
    try {
      mode = statSync(dir).mode;
    } catch {
      // not made yet: its parent decides
    }
    // The folder nearest the root decides what to do: keep looking upwards.
    if (mode !== null && (mode & 0o001) === 0) found = { dir, mode: mode & 0o777 };
    if (dirname(dir) === dir) return found;
  }
}

/**
 * The first folder that shuts the server's user out, named before anything starts with what to
 * do (when the market could not place its files elsewhere: placement.ts).
 */
export function checkReachableByServerUser(paths: string[]) {
  if (process.getuid?.() !== 0) return;
  for (const path of paths) {
    const shut = shutOutFolder(path);
    if (shut) {
      throw new Error(
        `As root, PostgreSQL runs as the user "postgres", which cannot enter ${shut.dir} (mode ${shut.mode.toString(8)}): ` +
          `clone the market under a folder others may enter (such as /srv or /opt), or run npm start as an ordinary user.`,
      );
    }
  }
}

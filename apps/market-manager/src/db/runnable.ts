import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";

/**
 * As root the embedded PostgreSQL runs as its own user, which must be able to enter every folder
 * above its binaries (in this clone's node_modules) and its data. The first folder that shuts it
 * out (a clone under /root, mode 0700) is named before anything starts, with what to do.
 */
export function checkReachableByServerUser(paths: string[]) {
  if (process.getuid?.() !== 0) return;
  for (const path of paths) {
    for (let dir = resolve(path); ; dir = dirname(dir)) {
      let mode: number | null = null;
      try {
        mode = statSync(dir).mode;
      } catch {
        // not made yet: its parent decides
      }
      if (mode !== null && (mode & 0o001) === 0) {
        throw new Error(
          `As root, PostgreSQL runs as the user "postgres", which cannot enter ${dir} (mode ${(mode & 0o777).toString(8)}): ` +
            `clone the market under a folder others may enter (such as /srv or /opt), or run npm start as an ordinary user.`,
        );
      }
      if (dirname(dir) === dir) break;
    }
  }
}

import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkReachableByServerUser } from "./runnable.ts";

describe("a folder the server's user cannot enter", () => {
  it.runIf(process.getuid?.() === 0)("is named, with what to do, before PostgreSQL is started", () => {
    const home = mkdtempSync(join(tmpdir(), "cyclemarket-private-"));
    const clone = join(home, "clone/.data");
    mkdirSync(clone, { recursive: true });
    chmodSync(home, 0o700);
    try {
      expect(() => checkReachableByServerUser([clone])).toThrow(new RegExp(`cannot enter ${home} \\(mode 700\\).*such as /srv`));
      chmodSync(home, 0o755);
      expect(() => checkReachableByServerUser([clone])).not.toThrow();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

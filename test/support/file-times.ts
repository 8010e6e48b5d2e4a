// A Vitest reporter that writes how long each test file held its worker (environment, import,
// hooks and tests) to .tmp/vitest-file-times.json, for `npm test`'s list of the slowest files.
// Vitest's JSON report times a file from its first test to its last, without the hooks that
// start its market.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

export interface FileTime {
  file: string;
  project: string;
  ms: number;
}

const root = resolve(import.meta.dirname, "../..");
export const fileTimesPath = join(root, ".tmp/vitest-file-times.json");

export default class FileTimes implements Reporter {
  private times: FileTime[] = [];

  onTestModuleEnd(module: TestModule) {
    const d = module.diagnostic();
    const ms = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
    this.times.push({ file: relative(root, module.moduleId), project: module.project.name, ms: Math.round(ms) });
  }

  onTestRunEnd() {
    mkdirSync(join(root, ".tmp"), { recursive: true });
    writeFileSync(fileTimesPath, JSON.stringify(this.times, null, 1));
  }
}

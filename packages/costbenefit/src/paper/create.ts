// The paper's policies by name, each built fresh for a run from the profile.
import { createEMosix } from "./first-cheaper.ts";
import { createEPvm } from "./least-cost.ts";
import { createMosix } from "./mosix.ts";
import type { PaperPolicy, PaperPolicyName } from "./paper-policy.ts";
import type { PaperProfile } from "./profile.ts";
import { createPvm } from "./round-robin.ts";

export function createPaperPolicy(name: PaperPolicyName, p: PaperProfile): PaperPolicy {
  switch (name) {
    case "pvm": return createPvm();
    case "e-pvm": return createEPvm(p.n, p.cpuLoad);
    case "mosix": return createMosix(p.mosix);
    case "e-mosix": return createEMosix(p.eMosix, p.n, p.cpuLoad);
  }
}

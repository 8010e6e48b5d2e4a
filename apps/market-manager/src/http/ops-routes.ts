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
    // In a market of several managers every series names its manager; with one, the series are as they always were.
    const several = (services.market.managers?.view.length ?? 0) > 1;
    const text = await registry.metrics();
    const body = several ? withLabel(text, "manager", services.market.managerId) : text;
    res.writeHead(200, { "content-type": registry.contentType, "cache-control": "no-store" });
    res.end(body);
    return true;
  }
  return false;
}

/**
 * Every sample of the Prometheus text with one more label (the manager's id, so the series of a
 * market's managers can be told apart). Added to the text as it is scraped: the registry's own
 * default labels are merged into every increment and observation, on the hot path.
 */
export function withLabel(text: string, name: string, value: string): string {
  const label = `${name}="${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  return text
    .split("\n")
    .map((line) => {
      if (line === "" || line.startsWith("#")) return line;
      const brace = line.indexOf("{");
      const space = line.indexOf(" ");
      if (brace !== -1 && brace < space) return `${line.slice(0, brace + 1)}${label},${line.slice(brace + 1)}`;
      return `${line.slice(0, space)}{${label}}${line.slice(space)}`;
    })
    .join("\n");
}

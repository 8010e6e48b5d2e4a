// Serves a WorkerApi over tRPC's HTTP wire format (one call or a batch, no transformer), as the Market
// Manager does at /api/trpc, so the CLI and its tRPC adapter can be tested end to end
// without the service.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { WorkerApi } from "../api.ts";

export interface FakeTrpcServer {
  url: string;
  authorizations: string[];
  close(): Promise<void>;
}

export async function serveWorkerApi(api: WorkerApi): Promise<FakeTrpcServer> {
  const authorizations: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const prefix = "/api/trpc/";
    if (!url.pathname.startsWith(prefix)) {
      res.writeHead(404).end();
      return;
    }
    authorizations.push(String(req.headers.authorization));
    const batch = url.searchParams.get("batch") === "1";
    const paths = decodeURIComponent(url.pathname.slice(prefix.length)).split(",");
    let sent: unknown;
    if (req.method === "GET") {
      sent = url.searchParams.has("input") ? JSON.parse(url.searchParams.get("input")!) : batch ? {} : undefined;
    } else {
      let body = "";
      for await (const chunk of req) body += chunk;
      sent = body ? JSON.parse(body) : batch ? {} : undefined;
    }
    // A batch keys its calls' inputs by their place; a single call sends its input as it is.
    const inputs = (batch ? sent : { 0: sent }) as Record<string, unknown>;
    const results = await Promise.all(
      paths.map(async (path, i) => {
        const name = path.replace(/^worker\./, "") as keyof WorkerApi;
        const fn = api[name] as ((input: unknown) => Promise<unknown>) | undefined;
        // As a tRPC server answers a procedure it does not have.
        if (typeof fn !== "function") return { error: { message: `No procedure found on path "${path}"`, code: -32004, data: { code: "NOT_FOUND", httpStatus: 404, path } } };
        try {
          const data = await fn.call(api, inputs[String(i)]);
          return { result: { data: data ?? null } };
        } catch (e) {
          return { error: { message: e instanceof Error ? e.message : String(e), code: -32603, data: { code: "INTERNAL_SERVER_ERROR", httpStatus: 500, path } } };
        }
      }),
    );
    const failed = results.some((r) => "error" in r);
    res.writeHead(failed ? 500 : 200, { "content-type": "application/json" }).end(JSON.stringify(batch ? results : results[0]));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    authorizations,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

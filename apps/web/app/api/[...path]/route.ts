// The browser talks only to this origin; /api/* is the Market Manager (tRPC under /api/trpc,
// Better Auth under /api/auth), forwarded here so cookies stay first-party. A route handler
// rather than a rewrite: rewrites are fixed when the app is built, and the Market Manager's
// address (MARKET_API_URL) is known only when it starts.
import { forwardedByServer } from "@/lib/forwarded";

export const dynamic = "force-dynamic";

const HOP_BY_HOP = ["host", "connection", "keep-alive", "transfer-encoding", "upgrade", "content-length"];

/**
 * The Market Managers, in order (MARKET_API_URL, comma-separated when the market runs several):
 * a request goes to the one that answered last, and to the next when that one does not answer,
 * so pages and workers behind the web app carry on when a manager dies.
 */
const managers = (process.env.MARKET_API_URL ?? "http://127.0.0.1:4000")
  .split(",")
  .map((u) => u.trim().replace(/\/+$/, ""))
  .filter(Boolean);
let answering = 0;

async function forward(req: Request): Promise<Response> {
  const url = new URL(req.url);
  const headers = new Headers(req.headers);
  for (const h of HOP_BY_HOP) headers.delete(h);
  // The client's address as the web app's server wrote it from the socket (server.ts); a header
  // the client wrote itself never reaches the Market Manager, whose per-address limits read it.
  if (!forwardedByServer()) headers.delete("x-forwarded-for");
  headers.set("x-forwarded-host", url.host);
  headers.set("x-forwarded-proto", url.protocol.replace(":", ""));
  const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
  let res: Response | null = null;
  for (let tried = 0; tried < managers.length && !res; tried++) {
    const at = (answering + tried) % managers.length;
    try {
      res = await fetch(`${managers[at]}${url.pathname}${url.search}`, {
        method: req.method,
        headers,
        body,
        redirect: "manual",
        cache: "no-store",
        // A stream (live.*) ends upstream when the browser goes away, so the Market Manager lets go of it.
        signal: req.signal,
      });
      answering = at;
    } catch (e) {
      // Only a connection refused is sure to have reached nobody: anything else may have acted.
      if ((e as { cause?: { code?: string } }).cause?.code !== "ECONNREFUSED") break;
    }
  }
  if (!res) return Response.json({ error: { message: "The Market Manager is not reachable; is it running?" } }, { status: 502 });
  const out = new Headers(res.headers);
  for (const h of [...HOP_BY_HOP, "content-encoding"]) out.delete(h);
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers: out });
}

export { forward as GET, forward as POST, forward as PUT, forward as PATCH, forward as DELETE, forward as OPTIONS };

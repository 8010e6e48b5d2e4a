// Raw HTTP as an attacker (or a careless client) sends it: no typed client smoothing anything.
import http from "node:http";

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function send(url: string, init: RequestInit & { json?: unknown } = {}): Promise<Answer> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  if (!headers.has("origin")) headers.set("origin", "http://localhost:3999");
  const res = await fetch(url, { ...init, headers, body, method: init.method ?? (body === undefined ? "GET" : "POST") });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON; the text is there
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A tRPC mutation over plain HTTP (no batching): the input is the body. */
export const mutation = (base: string, path: string, input: unknown, headers: Record<string, string> = {}) =>
  send(`${base}/api/trpc/${path}`, { json: input, headers });

/** What no response may carry: a stack frame, a source file, a query. */
export const LEAKS = /\bat [^\s]+ \(|\.tsx?:\d+|node_modules|prisma\.|invocation|"stack"/;

/** Signs up through the auth routes and returns the session cookie. */
export async function sessionOf(base: string, email: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: "http://localhost:3999", ...headers },
    body: JSON.stringify({ email, password: "correct horse battery", name: email.split("@")[0] }),
  });
  if (!res.ok) throw new Error(`sign-up failed: ${res.status} ${await res.text()}`);
  return res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
}

/**
 * A JSON POST from the given local address: the host's loopback holds all of 127/8, so a test plays
 * several machines (a client, a proxy, a stranger) by the address it connects from.
 */
export function postFrom(from: string, url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; json: any }> {
  const text = JSON.stringify(body);
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: "POST",
        localAddress: from,
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text), origin: "http://localhost:3999", ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          let json: unknown = null;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
        });
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

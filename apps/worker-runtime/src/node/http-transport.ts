// The Node worker's HTTP transport: the bytes the platform's fetch would put on the wire (the same
// request line, the same headers in the same order, the same body), sent over node:http with one
// keep-alive agent per process. The platform's fetch costs each call a Request, a Headers list, a
// Response, a web stream and an abort signal; a machine heartbeating, leasing and reporting pays
// that on every call, and a host running many machines pays it many times over. No timer is set
// per call; idle connections close when the server's Keep-Alive hint says (node:http reads it).
import http from "node:http";
import https from "node:https";
import { createGunzip, createInflate } from "node:zlib";
import type { Readable } from "node:stream";

export interface TransportInit {
  /** A work stream: a connection of its own for as long as it is read. */
  stream?: boolean;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal | null;
}

/** The answer: status, headers (lower-case names) and the body, already decompressed. */
export interface TransportResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Readable;
}

const SILENT_MS = 300_000;

/**
 * Calls share at most CALL_SOCKETS connections per market, more than a thousand machines keep
 * busy (a slow call must not hold a heartbeat back); more wait for one (a host running
 * many machines whose market stalls would otherwise open a socket per pending call, heartbeats
 * piling up by the thousand). Work streams hold a connection each for as long as they are open,
 * so they have agents of their own, without a bound, and never keep a call waiting.
 */
const CALL_SOCKETS = 4096;
// Every connection a burst opened is kept while it is idle (the agent's default keeps 256 and
// closes the rest): a connection closed after a burst is opened again at the next one, and a busy
// Node server accepts one new connection per turn of its event loop, so a host running many
// machines that reconnects by the hundred waits seconds for the market to take them, even with the
// market idle much of the time (bench:load shows it). The market keeps them as long (http/server.ts
// KEEP_ALIVE_MS).
const callAgent = <A>(Agent: new (o: http.AgentOptions) => A) => new Agent({ keepAlive: true, maxSockets: CALL_SOCKETS, maxFreeSockets: CALL_SOCKETS });
const callAgents = { "http:": callAgent(http.Agent), "https:": callAgent(https.Agent) };
const streamAgents = { "http:": new http.Agent({ keepAlive: true }), "https:": new https.Agent({ keepAlive: true }) };

// Headers the platform's fetch adds when the caller did not set them, in the order it adds them.
const FETCH_DEFAULTS: [string, string][] = [
  ["accept", "*/*"],
  ["accept-language", "*"],
  ["sec-fetch-mode", "cors"],
  ["user-agent", "node"],
  ["accept-encoding", "gzip, deflate"],
];

/** The request's header lines as the platform's fetch writes them: host and connection first, then the caller's, then its defaults, then the length. */
export function fetchHeaderLines(url: URL, method: string, headers: Record<string, string>, body: string | undefined): string[] {
  const lines = ["host", url.host, "connection", "keep-alive"];
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    seen.add(lower);
    lines.push(lower, value);
  }
  for (const [name, value] of FETCH_DEFAULTS) if (!seen.has(name)) lines.push(name, value);
  if (body !== undefined) lines.push("content-length", String(Buffer.byteLength(body)));
  else if (method === "POST" || method === "PUT") lines.push("content-length", "0");
  return lines;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? Object.assign(new Error("This operation was aborted"), { name: "AbortError" });
}

/** Sends one request and resolves with its answer once the headers arrive. */
export function send(target: string | URL, init: TransportInit = {}): Promise<TransportResponse> {
  const url = typeof target === "string" ? new URL(target) : target;
  const method = (init.method ?? "GET").toUpperCase();
  const lines = fetchHeaderLines(url, method, init.headers ?? {}, init.body);
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortError(signal));
  const agent = (init.stream ? streamAgents : callAgents)[url.protocol as keyof typeof callAgents];
  if (!agent) return Promise.reject(new Error(`unsupported protocol ${url.protocol} (http: and https: are)`));
  const request = url.protocol === "https:" ? https.request : http.request;
  const attempt = (retried: boolean): Promise<TransportResponse> =>
    new Promise((resolve, reject) => {
      const req = request({ protocol: url.protocol, hostname: url.hostname, port: url.port, path: url.pathname + url.search, method, agent, setHost: false, headers: lines });
      // As the platform's fetch gives up on a connection silent for 300 s (no answer, or a stream
      // without a byte): the socket's own idle timer, refreshed by traffic, not a timer per call.
      req.setTimeout(SILENT_MS, () => req.destroy(Object.assign(new Error(`no answer from ${url.host} in ${SILENT_MS / 1000} s`), { code: "ETIMEDOUT" })));
      // Once its whole answer has arrived, a request is cut without an error: its socket is then
      // on its way back to the agent, where an error has no one to go to and would escape (a work
      // stream closed from its last event's listener, as the tRPC link does on `return`).
      let answer: http.IncomingMessage | undefined;
      const onAbort = () => (answer?.complete ? req.destroy() : req.destroy(abortError(signal!) as Error));
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("response", (res) => {
        answer = res;
        // The abort stays wired until the body ends: a stream being read is cut by it too.
        const done = () => signal?.removeEventListener("abort", onAbort);
        res.once("end", done).once("close", done);
        const encoding = String(res.headers["content-encoding"] ?? "").toLowerCase();
        let body: Readable = res;
        if (encoding === "gzip" || encoding === "x-gzip") body = res.pipe(createGunzip());
        else if (encoding === "deflate") body = res.pipe(createInflate());
        if (body !== res) res.once("error", (e) => body.destroy(e)).once("aborted", () => body.destroy(new Error("the connection closed mid-answer")));
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
      req.on("error", (error: NodeJS.ErrnoException) => {
        signal?.removeEventListener("abort", onAbort);
        // A kept-alive connection the server closed just as it was reused: the request never
        // reached the server, so it goes once more on a fresh connection (node:http's own advice).
        if (!retried && req.reusedSocket && error.code === "ECONNRESET" && !signal?.aborted) resolve(attempt(true));
        else reject(error);
      });
      req.end(init.body);
    });
  return attempt(false);
}

async function text(body: Readable): Promise<string> {
  body.setEncoding("utf8");
  let out = "";
  for await (const chunk of body) out += chunk as string;
  return out;
}

/** A `fetch` for tRPC's HTTP links: what they read of an answer (ok, status, headers, json). */
export async function transportFetch(target: string | URL | Request, init: RequestInit = {}) {
  const { headers, body } = init;
  if (body !== undefined && body !== null && typeof body !== "string") throw new Error("the worker's transport sends text bodies only");
  const res = await send(typeof target === "string" || target instanceof URL ? target : target.url, {
    method: init.method,
    // tRPC passes a plain object; a Headers or a list of pairs is read in its order.
    headers: headers === undefined || (headers.constructor === Object) ? (headers as Record<string, string> | undefined) : Object.fromEntries(headers instanceof Headers ? headers.entries() : (headers as [string, string][])),
    body: body ?? undefined,
    signal: init.signal,
  });
  const content = await text(res.body);
  return {
    ok: res.status >= 200 && res.status < 300,
    status: res.status,
    // Built only if read (an error's metadata): tRPC reads the body alone.
    get headers() {
      const headers = new Headers();
      for (const [k, v] of Object.entries(res.headers)) for (const x of Array.isArray(v) ? v : v === undefined ? [] : [v]) headers.append(k, x);
      return headers;
    },
    json: async (): Promise<unknown> => JSON.parse(content),
    text: async () => content,
  };
}

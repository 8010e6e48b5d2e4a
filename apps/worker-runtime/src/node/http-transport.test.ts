import { createServer, type Server, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { createTRPCClient, httpLink } from "@trpc/client";
import { afterEach, describe, expect, it } from "vitest";
import { send, transportFetch } from "./http-transport.ts";
import { NodeEventSource } from "./event-source.ts";

// The worker's transport must put on the wire exactly the bytes the platform's fetch puts there
// (the market sees the same requests whichever sends them), and read answers as fetch would.

let server: Server | null = null;
const sockets = new Set<Socket>();
afterEach(async () => {
  // Kept-alive connections would hold the server open.
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** A raw TCP server: records each request's bytes as they arrive and answers each with `answer`. */
async function rawServer(answer: (request: string) => Buffer | string) {
  const requests: string[] = [];
  server = createServer((socket) => {
    sockets.add(socket);
    let pending = "";
    socket.on("data", (chunk) => {
      pending += chunk.toString("latin1");
      const head = pending.indexOf("\r\n\r\n");
      if (head < 0) return;
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(pending.slice(0, head))?.[1] ?? 0);
      if (pending.length < head + 4 + length) return;
      const request = pending.slice(0, head + 4 + length);
      pending = pending.slice(request.length);
      requests.push(request);
      socket.write(answer(request));
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { base: `http://127.0.0.1:${(server!.address() as { port: number }).port}`, requests };
}

const json = (body: string, extra = "") => `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

describe("the Node worker's HTTP transport", () => {
  it("sends a tRPC mutation and query byte for byte as the platform's fetch does", async () => {
    const { base, requests } = await rawServer(() => json(`{"result":{"data":{"ok":true}}}`));
    const headers = { authorization: "Bearer cm_secret" };
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const client = (fetch?: typeof transportFetch) => createTRPCClient<any>({ links: [httpLink({ url: `${base}/api/trpc`, headers, ...(fetch ? { fetch } : {}) })] }) as any;
    const calls = async (c: ReturnType<typeof client>) => [
      await c.worker.heartbeat.mutate({ machineId: "m-1", leaseIds: ["l-1", "l-2"], note: "é ✓" }),
      await c.worker.module.query({ moduleHash: "sha256:abc", jobId: "j 1" }),
      await c.worker.depart.mutate(undefined),
    ];
    const byFetch = await calls(client());
    const byFetchRequests = requests.splice(0);
    const byTransport = await calls(client(transportFetch));
    expect(byTransport).toEqual(byFetch);
    expect(requests).toHaveLength(3);
    expect(requests).toEqual(byFetchRequests);
    expect(requests[0]).toMatch(/^POST \/api\/trpc\/worker\.heartbeat HTTP\/1\.1\r\n/);
    expect(requests[1]).toMatch(/^GET \/api\/trpc\/worker\.module\?input=/);
  });

  it("opens a work stream with the same request as the platform's fetch, Last-Event-ID included", async () => {
    const { base, requests } = await rawServer(() => "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nid: 7\ndata: {}\n\n");
    const url = `${base}/api/trpc/live.work?input=%7B%7D`;
    const headers = { accept: "text/event-stream", "cache-control": "no-cache", "last-event-id": "6", authorization: "Bearer cm_secret" };
    const controller = new AbortController();
    const res = await fetch(url, { headers, signal: controller.signal });
    await until(() => requests.length === 1);
    controller.abort();
    void res.body?.cancel().catch(() => {});
    const source = new NodeEventSource(url, { headers: { authorization: "Bearer cm_secret" } });
    let lastId = "";
    source.addEventListener("message", (e) => (lastId = (e as MessageEvent).lastEventId));
    await until(() => lastId === "7");
    // The first connection carries no id yet; the one above was asked with "6".
    expect(requests[1]).toEqual(requests[0]!.replace("last-event-id: 6\r\n", ""));
    source.close();
  });

  it("reads a compressed answer, a refusal and a dropped connection as fetch would", async () => {
    const body = JSON.stringify({ result: { data: { big: "x".repeat(10_000) } } });
    const zipped = gzipSync(body);
    const { base } = await rawServer((request) =>
      request.includes("/gz")
        ? Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\ncontent-length: ${zipped.length}\r\n\r\n`), zipped])
        : `HTTP/1.1 503 Service Unavailable\r\nretry-after: 2\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`,
    );
    const gz = await transportFetch(`${base}/gz`, { method: "POST", body: "{}" });
    expect(await gz.json()).toEqual(JSON.parse(body));
    const busy = await transportFetch(`${base}/busy`);
    expect([busy.ok, busy.status, busy.headers.get("retry-after")]).toEqual([false, 503, "2"]);
    await expect(send("http://127.0.0.1:1/nobody-listens")).rejects.toThrow(/ECONNREFUSED/);
  });

  it("stops a request when its signal aborts", async () => {
    const { base } = await rawServer(() => "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n");
    const controller = new AbortController();
    const res = await send(`${base}/stream`, { signal: controller.signal });
    const ended = new Promise((resolve) => res.body.once("close", resolve));
    controller.abort();
    await ended;
    expect(res.body.destroyed).toBe(true);
  });
});

function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => (condition() ? resolve() : Date.now() > deadline ? reject(new Error("condition not met in time")) : setTimeout(check, 10));
    check();
  });
}

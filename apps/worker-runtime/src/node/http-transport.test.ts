import { createServer, type Server, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { createTRPCClient, httpBatchLink, httpLink, TRPCClientError } from "@trpc/client";
import { afterEach, describe, expect, it } from "vitest";
import { send, transportFetch } from "./http-transport.ts";
import { NodeEventSource } from "./event-source.ts";
import { workerCaller } from "./trpc-api.ts";

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
  it("sends the worker's calls byte for byte as tRPC's link over the platform's fetch did, and reads refusals the same", async () => {
    const refusal = `{"error":{"message":"This machine departed","code":-32009,"data":{"code":"CONFLICT","httpStatus":409,"reason":{"code":"machine-departed"}}}}`;
    const { base, requests } = await rawServer((request) => (request.includes("worker.report") ? json(refusal) : json(`{"result":{"data":{"ok":true}}}`)));
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const link = createTRPCClient<any>({ links: [httpLink({ url: `${base}/api/trpc`, headers: { authorization: "Bearer cm_secret" } })] }) as any;
    const caller = workerCaller(base, "cm_secret");
    const outcome = (p: Promise<unknown>) => p.then((data) => ({ data }), (e: TRPCClientError<never>) => ({ error: e instanceof TRPCClientError, message: e.message, data: e.data }));
    const heartbeat = { machineId: "m-1", leaseIds: ["l-1", "l-2"], note: "é ✓" };
    const module = { moduleHash: "sha256:abc", jobId: "j 1" };
    const report = { leaseId: "l-1", outputHash: "h" };
    const byLink = [
      await outcome(link.worker.heartbeat.mutate(heartbeat)),
      await outcome(link.worker.module.query(module)),
      await outcome(link.worker.depart.mutate(undefined)),
      await outcome(link.worker.report.mutate(report)),
    ];
    const byLinkRequests = requests.splice(0);
    const byCaller = [
      await outcome(caller.mutate("heartbeat", heartbeat)),
      await outcome(caller.query("module", module)),
      await outcome(caller.mutate("depart", undefined)),
      await outcome(caller.mutate("report", report)),
    ];
    expect(byCaller).toEqual(byLink);
    expect(byCaller[3]).toMatchObject({ error: true, message: "This machine departed", data: { reason: { code: "machine-departed" } } });
    expect(requests).toHaveLength(4);
    expect(requests).toEqual(byLinkRequests);
    expect(requests[0]).toMatch(/^POST \/api\/trpc\/worker\.heartbeat HTTP\/1\.1\r\n/);
    expect(requests[1]).toMatch(/^GET \/api\/trpc\/worker\.module\?input=/);
    expect(requests[2]).toMatch(/\r\ncontent-length: 0\r\n\r\n$/);
  });

  it("sends what the platform's fetch sends through tRPC's batching link too (the bench's consumers)", async () => {
    const { base, requests } = await rawServer(() => json(`[{"result":{"data":1}},{"result":{"data":2}}]`));
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const client = (fetch?: typeof transportFetch) => createTRPCClient<any>({ links: [httpBatchLink({ url: `${base}/api/trpc`, headers: { cookie: "s=1" }, ...(fetch ? { fetch } : {}) })] }) as any;
    const both = (c: ReturnType<typeof client>) => Promise.all([c.jobs.get.query({ jobId: "j" }), c.jobs.progress.query({ jobId: "j" })]);
    expect(await both(client(transportFetch))).toEqual(await both(client()));
    expect(requests[1]).toEqual(requests[0]);
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

  it("sends at most 4,096 calls at once on their own connections, a held work stream aside, and answers every call", async () => {
    let open = 0;
    const { base } = await rawServer((request) => (request.includes("/stream") ? "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" : json("{}")));
    server!.on("connection", () => open++);
    const stream = await send(`${base}/stream`, { stream: true });
    const calls = await Promise.all(Array.from({ length: 4200 }, () => transportFetch(`${base}/call`, { method: "POST", body: "{}" }).then((r) => r.status)));
    expect(calls.every((status) => status === 200)).toBe(true);
    expect(open).toBeLessThanOrEqual(4096 + 1);
    stream.body.destroy();
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

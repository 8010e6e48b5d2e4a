import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { NodeEventSource } from "./event-source.ts";

// The Node worker's EventSource against a real HTTP server: what the tRPC subscription link
// relies on (messages, named events, ids, reconnecting with Last-Event-ID, giving up on an
// answer that is not an event stream) and the API token in a header, never in the URL.

let server: Server | null = null;
let source: NodeEventSource | null = null;
afterEach(async () => {
  source?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** Serves each request with the next handler in turn; returns the base URL and the requests' headers. */
async function serve(...handlers: ((res: ServerResponse) => void)[]) {
  const seen: IncomingHttpHeaders[] = [];
  server = createServer((req, res) => {
    seen.push(req.headers);
    const handler = handlers[Math.min(seen.length - 1, handlers.length - 1)]!;
    handler(res);
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/stream`, seen };
}

const stream = (res: ServerResponse) => res.writeHead(200, { "content-type": "text/event-stream" });

function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => (condition() ? resolve() : Date.now() > deadline ? reject(new Error("condition not met in time")) : setTimeout(check, 10));
    check();
  });
}

describe("NodeEventSource", () => {
  it("is closed from the listener of a stream's last event, as the tRPC link does on `return`, without an error escaping", async () => {
    // The server ends the stream with the event; the listener closes the source while the chunk is
    // still being read, so the connection is cut after the reader stopped listening to it.
    const { url } = await serve((res) => (stream(res), res.end('event: return\ndata: ""\n\n')));
    const escaped: unknown[] = [];
    const onUncaught = (e: unknown) => escaped.push(e);
    process.on("uncaughtException", onUncaught);
    try {
      source = new NodeEventSource(url);
      let returned = false;
      source.addEventListener("return", () => {
        source!.close();
        returned = true;
      });
      await until(() => returned);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(escaped).toEqual([]);
      expect(source.readyState).toBe(NodeEventSource.CLOSED);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });

  it("reads events split anywhere across chunks, with CRLF, comments, named events and multi-line data", async () => {
    const { url, seen } = await serve((res) => {
      stream(res);
      // One CRLF is cut between two chunks; a comment and an unknown field are ignored.
      const chunks = [": ping\r\n", "id: 1\r\ndata: first\r", "\n\r\nevent: offer\nda", "ta: line one\ndata: line two\nnonsense: x\n\n"];
      let i = 0;
      const next = () => (i < chunks.length ? (res.write(chunks[i++]), setTimeout(next, 5)) : undefined);
      next();
    });
    source = new NodeEventSource(url, { headers: { authorization: "Bearer secret" } });
    const got: { type: string; data: string; id: string }[] = [];
    const record = (e: Event) => got.push({ type: e.type, data: (e as MessageEvent).data, id: (e as MessageEvent).lastEventId });
    source.addEventListener("message", record);
    source.addEventListener("offer", record);
    await until(() => got.length === 2);
    expect(got).toEqual([
      { type: "message", data: "first", id: "1" },
      { type: "offer", data: "line one\nline two", id: "1" },
    ]);
    expect(source.readyState).toBe(NodeEventSource.OPEN);
    expect(seen[0]).toMatchObject({ authorization: "Bearer secret", accept: "text/event-stream" });
  });

  it("connects again after the stream drops, at the retry the server asked for, resuming from the last id", async () => {
    const { url, seen } = await serve(
      (res) => {
        stream(res);
        res.end("retry: 50\nid: 7\ndata: before\n\n");
      },
      (res) => {
        stream(res);
        res.write("id: 8\ndata: after\n\n");
      },
    );
    source = new NodeEventSource(url);
    const data: string[] = [];
    let errors = 0;
    source.addEventListener("message", (e) => data.push((e as MessageEvent).data));
    source.addEventListener("error", () => errors++);
    await until(() => data.length === 2);
    expect(data).toEqual(["before", "after"]);
    expect(errors).toBe(1);
    expect(seen[0]!["last-event-id"]).toBeUndefined();
    expect(seen[1]!["last-event-id"]).toBe("7");
  });

  it("gives up for good on an answer that is not an event stream", async () => {
    const { url, seen } = await serve((res) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end('{"error":"no"}');
    });
    source = new NodeEventSource(url);
    let errors = 0;
    source.addEventListener("error", () => errors++);
    await until(() => source!.readyState === NodeEventSource.CLOSED);
    await new Promise((r) => setTimeout(r, 1_200)); // past the default retry of 1 s
    expect(errors).toBe(1);
    expect(seen).toHaveLength(1);
  });
});

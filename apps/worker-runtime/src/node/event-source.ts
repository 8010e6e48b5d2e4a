// An EventSource for the Node worker. Node 20 has none, and the standard one cannot send headers,
// while the worker's API token belongs in the Authorization header, never in a URL. It follows the
// server-sent events processing model as far as the tRPC subscription link relies on it: named
// events, data, ids and retry; a connection that drops is made again with Last-Event-ID; an answer
// that is not an event stream (a refusal, a proxy's error page) fails it for good (CLOSED).

import type { Readable } from "node:stream";
import { send } from "./http-transport.ts";

export interface NodeEventSourceInit {
  headers?: Record<string, string>;
  withCredentials?: boolean;
}

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 2;


export class NodeEventSource extends EventTarget {
  static readonly CONNECTING = CONNECTING;
  static readonly OPEN = OPEN;
  static readonly CLOSED = CLOSED;
  readonly CONNECTING = CONNECTING;
  readonly OPEN = OPEN;
  readonly CLOSED = CLOSED;
  readyState: number = CONNECTING;
  readonly url: string;
  readonly withCredentials = false;
  private readonly headers: Record<string, string>;
  private connection = new AbortController();
  private retry: ReturnType<typeof setTimeout> | undefined;
  private retryMs = 1000;
  private lastEventId = "";

  constructor(url: string | URL, init: NodeEventSourceInit = {}) {
    super();
    this.url = String(url);
    this.headers = init.headers ?? {};
    void this.connect();
  }

  close(): void {
    this.readyState = CLOSED;
    clearTimeout(this.retry);
    this.connection.abort();
  }

  private async connect(): Promise<void> {
    const connection = (this.connection = new AbortController());
    let body: Readable;
    try {
      const res = await send(this.url, {
        stream: true,
        headers: { accept: "text/event-stream", "cache-control": "no-cache", ...(this.lastEventId ? { "last-event-id": this.lastEventId } : {}), ...this.headers },
        signal: connection.signal,
      });
      if (res.status !== 200 || !/^text\/event-stream\b/i.test(String(res.headers["content-type"] ?? ""))) {
        res.body.destroy();
        return this.fail();
      }
      body = res.body;
    } catch {
      return this.reconnect();
    }
    if (this.readyState === CLOSED) return void body.destroy();
    this.readyState = OPEN;
    this.dispatchEvent(new Event("open"));
    try {
      await this.read(body);
    } catch {
      // The connection dropped (or close() aborted it): made again below unless closed.
    }
    this.reconnect();
  }

  private reconnect(): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CONNECTING;
    this.dispatchEvent(new Event("error"));
    if (this.readyState === CLOSED) return; // a listener closed it
    this.retry = setTimeout(() => void this.connect(), this.retryMs);
  }

  private fail(): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.dispatchEvent(new Event("error"));
  }

  private async read(body: Readable): Promise<void> {
    let buffer = "";
    let type = "";
    let data: string[] = [];
    let id = this.lastEventId;
    const line = (text: string) => {
      if (text === "") {
        // Dispatch: the id counts even for an event without data (it restores the resume point).
        this.lastEventId = id;
        if (data.length > 0 && this.readyState !== CLOSED) {
          this.dispatchEvent(new MessageEvent(type || "message", { data: data.join("\n"), lastEventId: id }));
        }
        type = "";
        data = [];
        return;
      }
      if (text.startsWith(":")) return; // a comment
      const colon = text.indexOf(":");
      const field = colon < 0 ? text : text.slice(0, colon);
      let value = colon < 0 ? "" : text.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") type = value;
      else if (field === "data") data.push(value);
      else if (field === "id" && !value.includes("\0")) id = value;
      else if (field === "retry" && /^\d+$/.test(value)) this.retryMs = Number(value);
    };
    body.setEncoding("utf8");
    for await (const chunk of body as AsyncIterable<string>) {
      buffer += chunk;
      // Lines are cut by scanning once from where the last one ended; the rest is kept for the next chunk.
      let from = 0;
      for (;;) {
        const cr = buffer.indexOf("\r", from);
        const lf = buffer.indexOf("\n", from);
        const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
        if (end < 0) break;
        // A CR at the very end may be the first half of a CRLF split across chunks: wait for the next.
        if (end === cr && cr === buffer.length - 1) break;
        line(buffer.slice(from, end));
        from = end === cr && buffer.charCodeAt(cr + 1) === 10 ? cr + 2 : end + 1;
      }
      if (from > 0) buffer = buffer.slice(from);
    }
  }
}

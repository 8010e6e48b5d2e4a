// An EventSource for the Node worker. Node 20 has none, and the standard one cannot send headers,
// while the worker's API token belongs in the Authorization header, never in a URL. It follows the
// server-sent events processing model as far as the tRPC subscription link relies on it: named
// events, data, ids and retry; a connection that drops is made again with Last-Event-ID; an answer
// that is not an event stream (a refusal, a proxy's error page) fails it for good (CLOSED).

export interface NodeEventSourceInit {
  headers?: Record<string, string>;
  withCredentials?: boolean;
}

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 2;

/** A line ends at CR, LF or CRLF; a CR at the end of a chunk may be the first half of a CRLF. */
const LINE_END = /\r\n|\r(?!$)|\n/;

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
    let body: ReadableStream<Uint8Array>;
    try {
      const res = await fetch(this.url, {
        headers: { accept: "text/event-stream", "cache-control": "no-cache", ...(this.lastEventId ? { "last-event-id": this.lastEventId } : {}), ...this.headers },
        signal: connection.signal,
      });
      if (res.status !== 200 || !res.body || !/^text\/event-stream\b/i.test(res.headers.get("content-type") ?? "")) {
        void res.body?.cancel().catch(() => {});
        return this.fail();
      }
      body = res.body;
    } catch {
      return this.reconnect();
    }
    if (this.readyState === CLOSED) return void body.cancel().catch(() => {});
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

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
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
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = LINE_END.exec(buffer); end; end = LINE_END.exec(buffer)) {
        line(buffer.slice(0, end.index));
        buffer = buffer.slice(end.index + end[0].length);
      }
    }
  }
}

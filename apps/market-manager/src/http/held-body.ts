import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyTooLarge, readBody } from "./body.ts";
import { sendRefusal } from "./respond.ts";

// A job's submission or quote can be megabytes of JSON (10,000 tasks with their inputs). Read here,
// its body is handed unparsed to the procedure, which has an intake thread parse and check it
// (tasks/intake-pool.ts) once the caller is known to be signed in and within its quotas; parsed
// here, on the market's thread, it held every other user's call while it was parsed.

/** The procedures whose input is parsed off the market's thread. */
const OFF_THREAD = new Set(["jobs.submit", "jobs.quote", "jobs.quoteHere"]);

/**
 * A smaller body is parsed on the market's thread, as any call's: quickly, and without waiting
 * behind a big job in an intake thread.
 */
export const OFF_THREAD_MIN_BYTES = 256 * 1024;

/** A batch that carries one of them beside other calls is parsed here, so it is kept small. */
export const MIXED_BATCH_MAX_BYTES = 1024 * 1024;

export interface HeldBody {
  bytes: Uint8Array;
  /** A batched call (`?batch=1`): the input is under "0". */
  batch: boolean;
}

const held = new WeakMap<IncomingMessage, HeldBody>();

/** The body held for the request's procedure, if it was. */
export const heldBodyOf = (req: IncomingMessage): HeldBody | null => held.get(req) ?? null;

/**
 * Reads the body of a request to a procedure of `OFF_THREAD` and holds it for the procedure,
 * giving the API adapter a placeholder input. False when the request was refused here. `bigBody`
 * is told before the reading of a body that declares it will be held: the intake threads start
 * while it arrives.
 */
export async function holdOffThreadBody(req: IncomingMessage, res: ServerResponse, url: URL, maxBytes: number, bigBody: () => void = () => {}): Promise<boolean> {
  if (req.method !== "POST") return true;
  const calls = decodeURIComponent(url.pathname.slice("/api/trpc/".length)).split(",");
  if (!calls.some((c) => OFF_THREAD.has(c))) return true;
  const alone = calls.length === 1;
  const limit = alone ? maxBytes : MIXED_BATCH_MAX_BYTES;
  if (alone && Number(req.headers["content-length"] ?? 0) >= OFF_THREAD_MIN_BYTES) bigBody();
  let body: Buffer;
  try {
    body = await readBody(req, limit);
  } catch (e) {
    if (!(e instanceof BodyTooLarge)) throw e;
    const message = alone
      ? `The request is over ${limit} bytes.`
      : `A request that carries ${calls.filter((c) => OFF_THREAD.has(c)).join(", ")} beside other calls is limited to ${limit} bytes; send it alone.`;
    sendRefusal(res, "PAYLOAD_TOO_LARGE", { code: "request-too-large", bytes: Number(req.headers["content-length"] ?? limit + 1), maxBytes: limit }, message);
    return false;
  }
  const request = req as IncomingMessage & { body?: unknown };
  if (!alone || body.length < OFF_THREAD_MIN_BYTES) {
    request.body = body.toString("utf8");
    return true;
  }
  const batch = url.searchParams.get("batch") === "1";
  // Its own memory, so it can move to the intake thread without a copy (a small body may share Node's pool).
  const bytes = body.byteOffset === 0 && body.buffer.byteLength === body.length ? new Uint8Array(body.buffer, 0, body.length) : new Uint8Array(body);
  held.set(req, { bytes, batch });
  request.body = batch ? { 0: null } : null;
  return true;
}

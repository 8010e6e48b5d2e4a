import type { IncomingMessage } from "node:http";
import { setImmediate as nextTurn } from "node:timers/promises";

export class BodyTooLarge extends Error {}

/** The request's body, refused as soon as it passes `limit` bytes (a declared length is refused before reading). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > limit) return Promise.reject(new BodyTooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners("data");
        req.resume(); // drain the rest unread so the answer can still be sent
        reject(new BodyTooLarge());
      } else chunks.push(chunk);
    });
    req.on("end", () => void join(chunks, size).then(resolve, reject));
    req.on("error", reject);
  });
}

/** Bytes copied per turn of the event loop when a body's chunks are joined. */
const JOIN_PER_TURN = 1024 * 1024;

/**
 * The chunks in one buffer, a megabyte per turn of the event loop: joined in one go, a big
 * submission was one long copy that held every other call on the market's thread. (Sizing the
 * buffer from the declared length as chunks arrive would cost no copy, but would let a client that
 * sends nothing have the market set aside the limit per connection.) A big body gets memory of its
 * own, so it moves to an intake thread without a copy (held-body.ts).
 */
async function join(chunks: Buffer[], size: number): Promise<Buffer> {
  if (size <= JOIN_PER_TURN) return Buffer.concat(chunks, size);
  const out = Buffer.allocUnsafeSlow(size);
  let at = 0;
  let sinceTurn = 0;
  for (const chunk of chunks) {
    chunk.copy(out, at);
    at += chunk.length;
    sinceTurn += chunk.length;
    if (sinceTurn >= JOIN_PER_TURN) {
      sinceTurn = 0;
      await nextTurn();
    }
  }
  return out;
}

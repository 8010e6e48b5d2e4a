import type { ServerResponse } from "node:http";

/**
 * A refusal outside tRPC (auth routes, body limits, batch sizes), in the same shape as the
 * tRPC errors' data: a code, a message and the reason as data. Retry-After when there is one.
 */
export function refuseHttp(
  res: ServerResponse,
  status: number,
  body: { code: string; message: string; reason: { code: string; retryAfterSeconds?: number; [k: string]: unknown } },
  requestId: string,
) {
  const headers: Record<string, string> = { "content-type": "application/json", "x-request-id": requestId };
  if (body.reason.retryAfterSeconds !== undefined) headers["retry-after"] = String(body.reason.retryAfterSeconds);
  res.writeHead(status, headers);
  res.end(JSON.stringify({ ...body, requestId }));
}

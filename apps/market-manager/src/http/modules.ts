import type { IncomingMessage, ServerResponse } from "node:http";
import type { Services } from "../services.ts";
import { checkModule } from "../tasks/modules.ts";
import { grantModuleRight } from "../tasks/module-rights.ts";
import { toBytes, toJson } from "../db/client.ts";
import { consumerOf, sendJson, sendRefusal, sendThrown } from "./respond.ts";

/**
 * PUT /api/modules: a module's raw bytes (not base64 in JSON), stored by SHA-256 once and named
 * by that hash in every job after, by those who sent them (tasks/module-rights.ts). Bytes past the
 * limit are not read: the answer names the limit and the size. The same bytes again cost nothing:
 * the stored module is kept, and the sender gains the right to name it.
 */
export async function uploadModule(services: Services, req: IncomingMessage, res: ServerResponse) {
  const max = services.config.MAX_MODULE_BYTES;
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > max) return tooLarge(res, declared, max);
  const caller = await consumerOf(services, req, res);
  if (!caller) return;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return tooLarge(res, size, max);
    chunks.push(chunk);
  }
  try {
    const bytes = Buffer.concat(chunks);
    const { hash, info } = checkModule(bytes, max);
    // One statement (ON CONFLICT DO NOTHING): two uploads of one new module at once both succeed.
    const { count } = await services.db.module.createMany({
      data: { hash, bytes: toBytes(bytes), size: bytes.length, imports: toJson(info.imports), ownerId: caller.id },
      skipDuplicates: true,
    });
    // Whoever sends the bytes may name them by hash in a job from now on, the first sender or not.
    await grantModuleRight(services.market, hash, caller.id);
    sendJson(res, count ? 201 : 200, { hash, size: bytes.length, stored: count > 0 });
  } catch (e) {
    sendThrown(res, e, services);
  }
}

function tooLarge(res: ServerResponse, bytes: number, maxBytes: number) {
  sendRefusal(res, "PAYLOAD_TOO_LARGE", { code: "module-too-large", bytes, maxBytes }, `The module is over the size limit of ${maxBytes} bytes.`);
}

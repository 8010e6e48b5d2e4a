import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Services } from "../services.ts";
import type { Caller } from "../api/trpc.ts";
import { acceptedOutputs } from "../tasks/views.ts";
import { consumerOf, sendRefusal, sendThrown } from "./respond.ts";
import { tarEntry, tarEnd } from "./tar.ts";
import { shortId } from "@cyclemarket/client/job-file";

// Downloads of a job's outputs as raw bytes: one task's stdout or stderr, or the whole job as a
// tar archive (`<index>.out`, `<index>.err` and a manifest `results.json`). Only the job's owner
// (or an admin) may read them; anyone else is told the job does not exist, as jobs.get does.

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const TASK_OUTPUT = new RegExp(`^/api/jobs/(${UUID})/tasks/(\\d{1,6})/(stdout|stderr)$`);
const ARCHIVE = new RegExp(`^/api/jobs/(${UUID})/archive\\.tar$`);
const ARCHIVE_PAGE = 200;

export const isDownload = (path: string) => TASK_OUTPUT.test(path) || ARCHIVE.test(path);

async function ownJob(services: Services, caller: Caller, jobId: string) {
  const job = await services.db.job.findUnique({ where: { id: jobId }, select: { id: true, name: true, ownerId: true, taskCount: true } });
  return job && (job.ownerId === caller.id || caller.roles.includes("admin")) ? job : null;
}

export async function download(services: Services, req: IncomingMessage, res: ServerResponse) {
  try {
    await serve(services, req, res);
  } catch (e) {
    if (!res.headersSent) sendThrown(res, e, services);
    else res.destroy(e instanceof Error ? e : undefined);
  }
}

async function serve(services: Services, req: IncomingMessage, res: ServerResponse) {
  const path = new URL(req.url ?? "/", "http://x").pathname;
  const caller = await consumerOf(services, req, res);
  if (!caller) return;
  const match = TASK_OUTPUT.exec(path) ?? ARCHIVE.exec(path)!;
  const job = await ownJob(services, caller, match[1]!);
  if (!job) return sendRefusal(res, "NOT_FOUND", { code: "not-found", what: "job" }, "No such job.");
  if (match.length === 4) {
    const index = Number(match[2]);
    const [row] = await acceptedOutputs(services.database.reads, job.id, index, 1, Infinity);
    if (!row || row.index !== index) return sendRefusal(res, "NOT_FOUND", { code: "no-output", index }, `Task ${index} has no accepted output yet.`);
    const bytes = match[3] === "stdout" ? row.stdout : row.stderr;
    res.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-length": String(bytes.length),
      "content-disposition": `attachment; filename="${index}.${match[3] === "stdout" ? "out" : "err"}"`,
      "x-output-hash": row.outputHash,
    });
    return void res.end(bytes);
  }
  await streamArchive(services, res, job);
}

async function streamArchive(services: Services, res: ServerResponse, job: { id: string; name: string }) {
  res.writeHead(200, {
    "content-type": "application/x-tar",
    "content-disposition": `attachment; filename="job-${shortId(job.id)}.tar"`,
  });
  const write = async (chunks: Buffer[]) => {
    for (const c of chunks) if (c.length && !res.write(c)) await once(res, "drain");
  };
  const now = services.clock.now();
  const manifest = [];
  let from = 0;
  for (;;) {
    const page = await acceptedOutputs(services.database.reads, job.id, from, ARCHIVE_PAGE);
    for (const r of page) {
      await write(tarEntry(`${r.index}.out`, r.stdout, now));
      await write(tarEntry(`${r.index}.err`, r.stderr, now));
      manifest.push({ index: r.index, args: r.args, exitCode: r.exitCode, outputHash: r.outputHash, bytes: r.stdout.length, machine: r.machineName, elapsedMs: r.elapsedMs });
    }
    if (!page.length) break;
    from = page[page.length - 1]!.index + 1;
    if (res.destroyed) return;
  }
  const summary = { job: { id: job.id, name: job.name }, tasks: manifest };
  await write(tarEntry("results.json", Buffer.from(JSON.stringify(summary, null, 2) + "\n"), now));
  res.end(tarEnd());
}

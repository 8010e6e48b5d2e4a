import { JobFileProblem, checkJobRequest, jobReasonWords, jobRequest, modulePath, type JobFile, type JobRequest, type ReadFile } from "@cyclemarket/client/job-file";
import type { useTRPCClient } from "@/lib/trpc";
import { describeAnyReason, isReason } from "@/lib/reasons";

// A job file becomes what the API takes, in the browser: its module is uploaded once (PUT
// /api/modules, raw bytes) unless the market holds it already or the file names it by hash, and
// its tasks are written out from the files added to the page. Both forms on /jobs/new use it.

/** A job file the page cannot send, in words. */
export class NotSent extends Error {}

export async function requestForJobFile(client: ReturnType<typeof useTRPCClient>, job: JobFile, read: ReadFile): Promise<JobRequest> {
  try {
    const path = modulePath(job);
    const module = path === null ? null : read(path);
    const hash = module ? await sha256(module) : (job.module as { sha256: string }).sha256;
    const held = await client.jobs.module.query({ hash });
    if (!module && !held) throw new NotSent(jobReasonWords({ code: "module-unknown", hash }));
    if (module && !held) {
      const res = await fetch("/api/modules", { method: "PUT", body: new Uint8Array(module), headers: { "content-type": "application/wasm" } });
      if (!res.ok) {
        const body = (await res.json().catch(() => null)) as { error?: { message?: string; data?: { reason?: unknown } } } | null;
        const reason = body?.error?.data?.reason;
        throw new NotSent(isReason(reason) ? describeAnyReason(reason) : (body?.error?.message ?? `The upload failed (HTTP ${res.status}).`));
      }
    }
    const request = jobRequest(job, hash, read);
    const refused = checkJobRequest(request);
    if (refused) throw new NotSent(jobReasonWords(refused));
    return request;
  } catch (e) {
    if (e instanceof JobFileProblem) throw new NotSent(jobReasonWords(e.reason));
    throw e;
  }
}

/** Reads the files added to the page, by their path, then by their name alone. */
export function pageReader(files: Map<string, Uint8Array>): ReadFile {
  return (path) => {
    const clean = path.replace(/^\.\//, "");
    const base = clean.split("/").pop()!;
    const found = files.get(clean) ?? [...files.entries()].find(([name]) => name.endsWith(`/${clean}`) || name === base)?.[1];
    if (!found) throw new JobFileProblem({ code: "input-file-missing", path, detail: "add it to the page" }, `Add ${path}.`);
    return found;
  };
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new Uint8Array(bytes));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

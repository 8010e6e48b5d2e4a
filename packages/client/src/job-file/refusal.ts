// The checks of a JobRequest past its schema, giving reasons as data (a code and the numbers):
// the API refuses with them and the CLI and the web form check the same before sending.
import { JOB_LIMITS as L } from "./limits.ts";
import { base64Bytes } from "./base64.ts";
import type { JobRequest } from "./job-request.ts";
import type { JobRefusal } from "./reason.ts";
import { sandboxPathProblem } from "./sandbox-path.ts";

export type { JobRefusal } from "./reason.ts";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The first thing wrong with the request's tasks, or null. */
export function checkJobRequest(request: Pick<JobRequest, "source">): JobRefusal | null {
  let total = 0;
  for (const [task, t] of request.source.tasks.entries()) {
    if (!BASE64.test(t.stdin) || t.stdin.length % 4 !== 0) return { code: "not-base64", task, field: "stdin" };
    const stdin = base64Bytes(t.stdin);
    if (stdin > L.stdinBytesPerTask) return { code: "stdin-too-large", task, bytes: stdin, maxBytes: L.stdinBytesPerTask };
    const names = Object.keys(t.files);
    if (names.length > L.filesPerTask) return { code: "too-many-files", task, files: names.length, max: L.filesPerTask };
    const env = Object.keys(t.env).length;
    if (env > L.envPerTask) return { code: "too-many-env", task, count: env, max: L.envPerTask };
    let files = 0;
    for (const [name, contents] of Object.entries(t.files)) {
      const problem = sandboxPathProblem(name);
      if (problem) return { code: "file-name-refused", task, name, problem };
      if (!BASE64.test(contents) || contents.length % 4 !== 0) return { code: "not-base64", task, field: `files.${name}` };
      files += base64Bytes(contents);
    }
    if (files > L.fileBytesPerTask) return { code: "task-files-too-large", task, bytes: files, maxBytes: L.fileBytesPerTask };
    total += stdin + files;
  }
  if (total > L.inputBytesPerJob) return { code: "job-input-too-large", bytes: total, maxBytes: L.inputBytesPerJob };
  return null;
}

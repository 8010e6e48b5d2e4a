// Words for the reasons that belong to job files, module uploads and tokens. The web app's
// reasons.ts and the CLI both render these codes through describeJobReason.
import type { Reason } from "./reason.ts";

const n = (r: Reason, k: string) => (typeof r[k] === "number" ? (r[k] as number).toLocaleString("en-US") : "?");
const s = (r: Reason, k: string) => (typeof r[k] === "string" ? (r[k] as string) : "?");
const bytes = (r: Reason, k: string) => {
  const v = r[k];
  if (typeof v !== "number") return "?";
  return v >= 1024 * 1024 ? `${(v / (1024 * 1024)).toFixed(1)} MiB (${n(r, k)} bytes)` : `${n(r, k)} bytes`;
};

const PATH_PROBLEMS: Record<string, string> = {
  empty: "it is empty",
  absolute: "it is absolute; names are relative to the task's folder",
  parent: "it contains '..', which would leave the task's folder",
  root: "it names the task's folder itself, not a file in it",
  nul: "it contains a NUL character",
  backslash: "it contains a backslash; use '/' between folders",
  "too-long": "it is longer than 255 characters",
};

const WORDS: Record<string, (r: Reason) => string> = {
  "file-name-refused": (r) => `Task ${n(r, "task")}: the input file name ${JSON.stringify(r.name)} is refused: ${PATH_PROBLEMS[s(r, "problem")] ?? s(r, "problem")}.`,
  "input-file-name-refused": (r) => `Task ${n(r, "task")}: the input file name ${JSON.stringify(r.name)} is refused: ${PATH_PROBLEMS[s(r, "problem")] ?? s(r, "problem")}.`,
  "too-many-files": (r) => `Task ${n(r, "task")} has ${n(r, "files")} input files; the limit is ${n(r, "max")}.`,
  "too-many-env": (r) => `Task ${n(r, "task")} has ${n(r, "count")} environment variables; the limit is ${n(r, "max")}.`,
  "stdin-too-large": (r) => `Task ${n(r, "task")}'s stdin is ${bytes(r, "bytes")}; the limit is ${bytes(r, "maxBytes")} per task.`,
  "task-files-too-large": (r) => `Task ${n(r, "task")}'s input files come to ${bytes(r, "bytes")}; the limit is ${bytes(r, "maxBytes")} per task.`,
  "job-input-too-large": (r) => `The job's stdin and input files come to ${bytes(r, "bytes")}; the limit is ${bytes(r, "maxBytes")} per job.`,
  "not-base64": (r) => `Task ${n(r, "task")}'s ${s(r, "field")} is not base64.`,
  "request-too-large": (r) => `The request is ${bytes(r, "bytes")}; the market takes at most ${bytes(r, "maxBytes")} in one request. Upload the module separately and keep stdin and input files within the per-job limit.`,
  "module-too-large": (r) => `The module is ${bytes(r, "bytes")}; the limit is ${bytes(r, "maxBytes")}.`,
  "module-unknown": (r) => `You have not uploaded a module with hash ${s(r, "hash").slice(0, 12)}…: upload its bytes first (PUT /api/modules; the same bytes sent by someone else are not stored again).`,
  "input-file-missing": (r) => `Cannot read ${s(r, "path")}${typeof r.detail === "string" ? ` (${r.detail})` : ""}.`,
  "no-lines": (r) => `${s(r, "path")} has no lines, so the job has no tasks.`,
  "too-many-lines": (r) => `${s(r, "path")} has ${n(r, "lines")} lines; a job has at most ${n(r, "max")} tasks.`,
  "token-scope": (r) => `This token may not do that: it needs the ${s(r, "needed")} scope and has ${Array.isArray(r.scopes) ? (r.scopes as string[]).join(", ") || "none" : "?"}.`,
  "token-cannot-mint": () => "A token cannot create or revoke tokens: sign in on the Account page (or with `cyclemarket login`).",
  "scope-needs-role": (r) => `The ${s(r, "scope")} scope needs the ${s(r, "role")} role on your account.`,
};

/** Words for a job-file, upload or token reason, or null when the code is not one of these. */
export function describeJobReason(reason: Reason): string | null {
  return WORDS[reason.code]?.(reason) ?? null;
}

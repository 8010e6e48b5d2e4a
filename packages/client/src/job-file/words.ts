// Words for the reasons that belong to job files, module uploads and tokens. The web app's
// reasons.ts and the CLI both render these codes through describeJobReason. Each sentence is given
// its code's fields as the market's vocabulary types them, so a renamed field does not compile.
import { MarketReason } from "@cyclemarket/costbenefit";
import type { ClientReason, ClientReasonCode, ClientReasonOf, Reason } from "./reason.ts";
import type { PathProblem } from "./sandbox-path.ts";

const count = (v: number) => v.toLocaleString("en-US");
const bytes = (v: number) => (v >= 1024 * 1024 ? `${(v / (1024 * 1024)).toFixed(1)} MiB (${count(v)} bytes)` : `${count(v)} bytes`);

const PATH_PROBLEMS: Record<PathProblem, string> = {
  empty: "it is empty",
  absolute: "it is absolute; names are relative to the task's folder",
  parent: "it contains '..', which would leave the task's folder",
  root: "it names the task's folder itself, not a file in it",
  nul: "it contains a NUL character",
  backslash: "it contains a backslash; use '/' between folders",
  "too-long": "it is longer than 255 characters",
};

const WORDS: { [C in ClientReasonCode]: (r: ClientReasonOf<C>) => string } = {
  "file-name-refused": (r) => `Task ${count(r.task)}: the input file name ${JSON.stringify(r.name)} is refused: ${PATH_PROBLEMS[r.problem]}.`,
  "input-file-name-refused": (r) => `Task ${count(r.task)}: the input file name ${JSON.stringify(r.name)} is refused: ${PATH_PROBLEMS[r.problem]}.`,
  "too-many-files": (r) => `Task ${count(r.task)} has ${count(r.files)} input files; the limit is ${count(r.max)}.`,
  "too-many-env": (r) => `Task ${count(r.task)} has ${count(r.count)} environment variables; the limit is ${count(r.max)}.`,
  "stdin-too-large": (r) => `Task ${count(r.task)}'s stdin is ${bytes(r.bytes)}; the limit is ${bytes(r.maxBytes)} per task.`,
  "task-files-too-large": (r) => `Task ${count(r.task)}'s input files come to ${bytes(r.bytes)}; the limit is ${bytes(r.maxBytes)} per task.`,
  "job-input-too-large": (r) => `The job's stdin and input files come to ${bytes(r.bytes)}; the limit is ${bytes(r.maxBytes)} per job.`,
  "not-base64": (r) => `Task ${count(r.task)}'s ${r.field} is not base64.`,
  "request-too-large": (r) =>
    `The request is ${bytes(r.bytes)}; the market takes at most ${bytes(r.maxBytes)} in one request. Upload the module separately and keep stdin and input files within the per-job limit.`,
  "module-too-large": (r) => `The module is ${bytes(r.bytes)}; the limit is ${bytes(r.maxBytes)}.`,
  "module-unknown": (r) =>
    `You have not uploaded a module with hash ${r.hash.slice(0, 12)}…: upload its bytes first (PUT /api/modules; the same bytes sent by someone else are not stored again).`,
  "input-file-missing": (r) => `Cannot read ${r.path}${r.detail !== undefined ? ` (${r.detail})` : ""}.`,
  "no-lines": (r) => `${r.path} has no lines, so the job has no tasks.`,
  "too-many-lines": (r) => `${r.path} has ${count(r.lines)} lines; a job has at most ${count(r.max)} tasks.`,
  "token-scope": (r) => `This token may not do that: it needs the ${r.needed} scope and has ${r.scopes.join(", ") || "none"}.`,
  "token-cannot-mint": () => "A token cannot create or revoke tokens: sign in on the Account page (or with `cyclemarket login`).",
  "scope-needs-role": (r) => `The ${r.scope} scope needs the ${r.role} role on your account.`,
};

/** Words for a job-file, upload or token reason of the vocabulary. */
export function jobReasonWords(reason: ClientReason): string {
  return (WORDS[reason.code] as (r: ClientReason) => string)(reason);
}

/**
 * Words for a reason that arrived as data (an API error's `reason`), or null when it is not one of
 * this package's codes or does not hold its code's fields.
 */
export function describeJobReason(reason: Reason): string | null {
  if (!Object.hasOwn(WORDS, reason.code)) return null;
  const checked = MarketReason.safeParse(reason);
  return checked.success ? jobReasonWords(checked.data as ClientReason) : null;
}

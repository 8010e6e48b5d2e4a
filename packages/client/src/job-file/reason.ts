import type { PathProblem } from "./sandbox-path.ts";

/** A reason as data: a code and the numbers behind it (the API's `error.data.reason`). */
export type Reason = { code: string; [detail: string]: unknown };

// The reasons this package gives and words, written out here because a project that installs the
// package has the market's vocabulary only through them; vocabulary-match.ts holds each to the
// vocabulary's type of its code, so the two cannot drift apart.

/** What is wrong with a job file (expand.ts). */
export type JobFileReason =
  | { code: "input-file-missing"; path: string; detail?: string | undefined }
  | { code: "input-file-name-refused"; task: number; name: string; problem: PathProblem }
  | { code: "no-lines"; path: string }
  | { code: "too-many-lines"; path: string; lines: number; max: number };

/** What is wrong with a request's tasks (refusal.ts). */
export type JobRefusal =
  | { code: "file-name-refused"; task: number; name: string; problem: PathProblem }
  | { code: "too-many-files"; task: number; files: number; max: number }
  | { code: "too-many-env"; task: number; count: number; max: number }
  | { code: "stdin-too-large"; task: number; bytes: number; maxBytes: number }
  | { code: "task-files-too-large"; task: number; bytes: number; maxBytes: number }
  | { code: "job-input-too-large"; bytes: number; maxBytes: number }
  | { code: "not-base64"; task: number; field: string };

/** Every reason this package has words for: job files, module uploads, tokens, request sizes. */
export type ClientReason =
  | JobFileReason
  | JobRefusal
  | { code: "request-too-large"; bytes: number; maxBytes: number }
  | { code: "module-too-large"; bytes: number; maxBytes: number }
  | { code: "module-unknown"; hash: string }
  | { code: "token-scope"; needed: string; scopes: string[] }
  | { code: "token-cannot-mint" }
  | { code: "scope-needs-role"; scope: string; role: string };
export type ClientReasonCode = ClientReason["code"];
export type ClientReasonOf<C extends ClientReasonCode> = Extract<ClientReason, { code: C }>;

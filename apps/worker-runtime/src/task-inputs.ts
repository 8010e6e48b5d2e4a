// What a task may be given besides its arguments and stdin: environment variables and input
// files. The market checks them at submission (so a bad job is refused at once, with the reason
// as data) and the sandbox checks them again before a run. Input files are mounted read-only
// under "/" at their relative path: "data/in.txt" is "/data/in.txt" to the task.

/** Linux's limits on a whole path and on one of its names. */
export const MAX_PATH_BYTES = 4096;
export const MAX_NAME_BYTES = 255;

export type TaskInputRefusal =
  | { code: "empty-path"; path: string }
  | { code: "absolute-path"; path: string }
  | { code: "parent-segment"; path: string }
  | { code: "bad-segment"; path: string }
  | { code: "nul-byte"; path: string }
  | { code: "path-too-long"; path: string; bytes: number; maxBytes: number }
  | { code: "path-conflict"; path: string; other: string }
  | { code: "bad-env-name"; name: string }
  | { code: "nul-in-env-value"; name: string };

const bytesOf = (s: string) => new TextEncoder().encode(s).length;

/** Why one input file path is refused, or null when it names a file inside the task's root. */
export function checkTaskFilePath(path: string): TaskInputRefusal | null {
  if (path.length === 0) return { code: "empty-path", path };
  if (path.includes("\0")) return { code: "nul-byte", path };
  if (path.startsWith("/")) return { code: "absolute-path", path };
  const bytes = bytesOf(path);
  if (bytes > MAX_PATH_BYTES) return { code: "path-too-long", path, bytes, maxBytes: MAX_PATH_BYTES };
  for (const segment of path.split("/")) {
    if (segment === "..") return { code: "parent-segment", path };
    // One spelling per file: "a//b", "./a" and "a/" would let two names reach the same node.
    if (segment === "" || segment === ".") return { code: "bad-segment", path };
    if (bytesOf(segment) > MAX_NAME_BYTES) return { code: "path-too-long", path, bytes: bytesOf(segment), maxBytes: MAX_NAME_BYTES };
  }
  return null;
}

/** Checks every path, and that no file is also used as a directory of another ("a" and "a/b"). */
export function checkTaskFiles(paths: readonly string[]): TaskInputRefusal | null {
  for (const path of paths) {
    const refusal = checkTaskFilePath(path);
    if (refusal) return refusal;
  }
  const files = new Set(paths);
  for (const path of paths) {
    for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) {
      const dir = path.slice(0, i);
      if (files.has(dir)) return { code: "path-conflict", path, other: dir };
    }
  }
  return null;
}

/** Names are what a shell would export: no "=", no NUL, not empty; values have no NUL. */
export function checkTaskEnv(env: Readonly<Record<string, string>>): TaskInputRefusal | null {
  for (const [name, value] of Object.entries(env)) {
    if (name.length === 0 || name.includes("=") || name.includes("\0")) return { code: "bad-env-name", name };
    if (value.includes("\0")) return { code: "nul-in-env-value", name };
  }
  return null;
}

/** One English sentence for the submission form. */
export function describeTaskInputRefusal(r: TaskInputRefusal): string {
  switch (r.code) {
    case "empty-path":
      return "An input file has an empty name.";
    case "absolute-path":
      return `The input file ${JSON.stringify(r.path)} is absolute; give paths relative to the task's root "/" (for example "data/in.txt").`;
    case "parent-segment":
      return `The input file ${JSON.stringify(r.path)} contains "..", which would leave the task's root.`;
    case "bad-segment":
      return `The input file ${JSON.stringify(r.path)} has an empty or "." name in it; write each path one way, like "data/in.txt".`;
    case "nul-byte":
      return `The input file ${JSON.stringify(r.path)} contains a NUL character.`;
    case "path-too-long":
      return `The input file ${JSON.stringify(r.path)} has a name of ${r.bytes} bytes, over the limit of ${r.maxBytes}.`;
    case "path-conflict":
      return `The input file ${JSON.stringify(r.path)} needs ${JSON.stringify(r.other)} to be a directory, but it is also an input file.`;
    case "bad-env-name":
      return `The environment variable name ${JSON.stringify(r.name)} is empty or contains "=" or NUL.`;
    case "nul-in-env-value":
      return `The environment variable ${JSON.stringify(r.name)} has a NUL character in its value.`;
  }
}

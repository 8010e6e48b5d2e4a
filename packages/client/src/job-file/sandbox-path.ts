// Names of a task's input files inside the sandbox. The sandbox serves them from memory under
// its root; a name that could point outside that root is refused rather than cleaned up, so
// what the program opens is exactly what the job file said.

export type PathProblem = "empty" | "absolute" | "parent" | "root" | "nul" | "backslash" | "too-long";

export const MAX_PATH_CHARS = 255;

/** Why `name` is not a plain relative path under the sandbox's root, or null when it is. */
export function sandboxPathProblem(name: string): PathProblem | null {
  if (name.length === 0) return "empty";
  if (name.includes("\0")) return "nul";
  if (name.length > MAX_PATH_CHARS) return "too-long";
  // Backslashes separate directories on some hosts: "..\\x" would escape there.
  if (name.includes("\\")) return "backslash";
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) return "absolute";
  const parts = name.split("/");
  if (parts.some((part) => part === "..")) return "parent";
  // ".", "./." or "./": the task's root itself, which a file cannot replace.
  if (parts.every((part) => part === "." || part === "")) return "root";
  return null;
}

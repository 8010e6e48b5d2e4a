import { readFileSync } from "node:fs";

/** A file of /proc/<pid> as text, or null where there is none (the process gone, or no /proc: macOS). */
export function procFile(pid: number | string, name: string): string | null {
  try {
    return readFileSync(`/proc/${pid}/${name}`, "utf8");
  } catch {
    return null;
  }
}

/**
 * The fields of /proc/<pid>/stat from the third on (the state first), or null where it cannot be
 * read. They follow the command's closing parenthesis (the command may hold spaces and
 * parentheses itself): proc(5)'s field n is at index n - 3.
 */
export function procStat(pid: number | string): string[] | null {
  const stat = procFile(pid, "stat");
  return stat === null ? null : stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { JobFile, JobFileProblem, checkJobFile, jobFileIssueWords, type ReadFile } from "../job-file/index.ts";
import { MarketError } from "./errors.ts";

export interface LoadedJobFile {
  job: JobFile;
  /** The folder paths in the job file are relative to. */
  dir: string;
  read: ReadFile;
}

/** Reads files named in a job file, relative to `dir`. */
export function diskReader(dir: string): ReadFile {
  return (path) => {
    try {
      return new Uint8Array(readFileSync(resolve(dir, path)));
    } catch (e) {
      const detail = (e as NodeJS.ErrnoException).code ?? String(e);
      throw new JobFileProblem({ code: "input-file-missing", path, detail }, `Cannot read ${path} (${detail}).`);
    }
  };
}

/** A job file from disk, checked against the JobFile schema; problems are MarketErrors with words. */
export function loadJobFile(path: string): LoadedJobFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new MarketError("refused", `Cannot read the job file ${path}: ${(e as NodeJS.ErrnoException).code ?? e}.`, { code: "job-file-unreadable", path });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new MarketError("refused", `${path} is not JSON: ${(e as Error).message}.`, { code: "job-file-not-json", path });
  }
  return parseJobFile(json, dirname(resolve(path)), path);
}

/** A job file already parsed as JSON (from a script), its paths relative to `dir`. */
export function parseJobFile(json: unknown, dir: string, label = "the job file"): LoadedJobFile {
  const checked = checkJobFile(json);
  if (!checked.ok) throw new MarketError("refused", `${label} is not a valid job file: ${jobFileIssueWords(checked.issues)}`, { code: "job-file-invalid", issues: checked.issues });
  return { job: checked.job, dir, read: diskReader(dir) };
}

import { createHash } from "node:crypto";
import { checkJobRequest, jobReasonWords, JobFileProblem, jobRequest, modulePath, type JobFile, type JobRequest } from "../job-file/index.ts";
import { httpError, marketError, MarketError } from "./errors.ts";
import { loadJobFile, parseJobFile, type LoadedJobFile } from "./load.ts";
import { apiBase, marketClient, type MarketClient } from "./trpc.ts";
import { JobHandle } from "./job.ts";
import type { Quote } from "./wire.ts";

export interface ConnectOptions {
  /** The web app's address or the Market Manager's. */
  url: string;
  /**
   * An API token with the `consume` scope (Account page, or `cyclemarket login`). It may be
   * undefined so that `process.env.CYCLEMARKET_TOKEN` type-checks as it is; a missing one is
   * refused here, in words, rather than by the market as an unknown token.
   */
  token: string | undefined;
}

/** A job to send: a path to a job file, or a job file's contents with the folder its paths are relative to. */
export type JobSource = string | { job: unknown; dir: string };

/** The consumer's SDK: submit and quote job files, follow jobs, fetch their outputs as bytes. */
export class CycleMarket {
  /** @internal The typed tRPC client; its types are the Market Manager's, which the published package does not carry. */
  readonly api: MarketClient;
  readonly options: { url: string; token: string };
  constructor(options: ConnectOptions) {
    const token = options.token?.trim();
    if (!token) throw new MarketError("unauthorized", "No API token was given to connect(): make a consume token on the Account page and pass it as token (the examples read it from CYCLEMARKET_TOKEN: is that set?).");
    this.options = { url: options.url, token };
    this.api = marketClient(options.url, { authorization: `Bearer ${token}` });
  }

  /** Sends a module's bytes unless the market already holds them; returns its SHA-256 (what jobs name). */
  async uploadModule(bytes: Uint8Array): Promise<{ hash: string; uploaded: boolean }> {
    const hash = createHash("sha256").update(bytes).digest("hex");
    if (await call(() => this.api.jobs.module.query({ hash }))) return { hash, uploaded: false };
    let res: Response;
    try {
      res = await fetch(`${apiBase(this.options.url)}/modules`, {
        method: "PUT",
        headers: { authorization: `Bearer ${this.options.token}`, "content-type": "application/wasm" },
        body: new Uint8Array(bytes),
      });
    } catch (e) {
      throw marketError(e);
    }
    if (!res.ok) throw await httpError(res);
    const body = (await res.json()) as { hash: string };
    if (body.hash !== hash) throw new MarketError("refused", `The market stored the module under ${body.hash}, not ${hash}.`);
    return { hash, uploaded: true };
  }

  /** The request a job file makes, after its module is uploaded (once); a module named by hash must be held by the market already. */
  async prepare(source: JobSource): Promise<JobRequest> {
    const loaded = load(source);
    const path = modulePath(loaded.job);
    if (path !== null) return requestOf(loaded, (await this.uploadModule(wrap(() => loaded.read(path)))).hash);
    const hash = (loaded.job.module as { sha256: string }).sha256;
    if (!(await call(() => this.api.jobs.module.query({ hash })))) {
      const reason = { code: "module-unknown" as const, hash };
      throw new MarketError("refused", jobReasonWords(reason), reason);
    }
    return requestOf(loaded, hash);
  }

  /** What the market would decide now, committing nothing. */
  async quote(source: JobSource): Promise<Quote> {
    const request = await this.prepare(source);
    return call(() => this.api.jobs.quote.mutate(request));
  }

  /**
   * Submits a job file; the handle follows the job. A job the market rejects still gets a handle
   * (see `decision`). `manager`: the Market Manager whose quote to take (a quote's `manager`), which
   * then holds the job; by default the one the market reaches. `split`: a split quote's parts
   * (a quote's `split.parts`), to run the job split across their managers as one job.
   */
  async submit(source: JobSource, options: { manager?: string; split?: { manager: string; fromTask: number; tasks: number }[] } = {}): Promise<JobHandle> {
    const request = await this.prepare(source);
    const split = options.split?.map(({ manager, fromTask, tasks }) => ({ manager, fromTask, tasks }));
    const chosen = split ? { split } : options.manager ? { manager: options.manager } : {};
    const { jobId, decision } = await call(() => this.api.jobs.submit.mutate({ ...request, ...chosen }));
    return new JobHandle(this, jobId, decision);
  }

  /** A job submitted earlier. */
  job(jobId: string): JobHandle {
    return new JobHandle(this, jobId, null);
  }
}

/** Connects with a consume-scoped token. */
export const connect = (options: ConnectOptions) => new CycleMarket(options);

/** Runs a call to the market; any failure becomes a MarketError with the market's reason. */
export async function call<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    throw marketError(e);
  }
}

function load(source: JobSource): LoadedJobFile {
  return typeof source === "string" ? loadJobFile(source) : parseJobFile(source.job, source.dir);
}

/** The job file's request, checked here as the market would check it, so a refusal costs no upload. */
function requestOf(loaded: LoadedJobFile, hash: string): JobRequest {
  const request = wrap(() => jobRequest(loaded.job as JobFile, hash, loaded.read));
  const problem = checkJobRequest(request);
  if (problem) throw new MarketError("refused", jobReasonWords(problem), problem);
  return request;
}

function wrap<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof JobFileProblem) throw new MarketError("refused", jobReasonWords(e.reason), e.reason);
    throw e;
  }
}

import { TRPCClientError } from "@trpc/client";
import { describeJobReason, type Reason } from "../job-file/index.ts";

/**
 * What went wrong talking to the market, with the market's reason as data when it gave one.
 * `kind` says whose problem it is: the request was refused, the caller is not signed in or not
 * allowed, or the market could not be reached.
 */
export class MarketError extends Error {
  constructor(
    readonly kind: "refused" | "unauthorized" | "unreachable",
    message: string,
    readonly reason: Reason | null = null,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

interface ErrorData {
  code?: string;
  httpStatus?: number;
  reason?: Reason | null;
  zodIssues?: { path: string[]; message: string }[] | null;
}

function fromData(data: ErrorData | undefined, message: string): MarketError {
  const status = data?.httpStatus ?? null;
  const reason = data?.reason ?? null;
  const kind = status === 401 || status === 403 ? "unauthorized" : "refused";
  const issues = data?.zodIssues?.map((i) => `${i.path.join(".") || "(job)"}: ${i.message}`).join("; ");
  const words = (reason && describeJobReason(reason)) ?? issues ?? message;
  return new MarketError(kind, words, reason, status);
}

/** The system's code for a failed connection (ECONNREFUSED, ENOTFOUND...), from an error or its causes. */
export function networkCode(e: unknown): string | null {
  let at = e as { cause?: unknown; code?: unknown } | null | undefined;
  for (let depth = 0; at && depth < 5; depth++, at = at.cause as typeof at) {
    if (typeof at.code === "string" && /^E[A-Z]+$/.test(at.code)) return at.code;
  }
  return null;
}

/** Any error from a call to the market, as a MarketError. */
export function marketError(e: unknown): MarketError {
  if (e instanceof MarketError) return e;
  if (e instanceof TRPCClientError) {
    if (!e.data && /fetch failed|ECONNREFUSED|ENOTFOUND|network/i.test(e.message)) {
      const code = networkCode(e);
      return new MarketError("unreachable", `Cannot reach the market: ${code ?? e.message}`);
    }
    return fromData(e.data as ErrorData | undefined, e.message);
  }
  if (e instanceof TypeError && /fetch failed/.test(e.message)) {
    const cause = (e as { cause?: { code?: string } }).cause?.code;
    return new MarketError("unreachable", `Cannot reach the market${cause ? ` (${cause})` : ""}.`);
  }
  return new MarketError("refused", e instanceof Error ? e.message : String(e));
}

/** @internal A plain HTTP answer (module upload, downloads) that is not 2xx, as a MarketError. */
export async function httpError(res: Response): Promise<MarketError> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { error?: { message?: string; data?: ErrorData } };
    return fromData({ httpStatus: res.status, ...body.error?.data }, body.error?.message ?? `HTTP ${res.status}`);
  } catch {
    return new MarketError(res.status === 401 || res.status === 403 ? "unauthorized" : "refused", `HTTP ${res.status}: ${text.slice(0, 200)}`, null, res.status);
  }
}

// An outage is a failure that says nothing about the request: the Market Manager or its database
// could not be reached (the manager restarting, the proxy finding nobody, the stream dropping).
// Such failures are retried until the market is back, the page keeps what it showed, and the
// connection banner says "reconnecting..." instead of the library's own words.

export const OUTAGE_WORDS = "The market cannot be reached right now; reconnecting…";

/** Codes of the market's answers that mean "not now" rather than "no". */
const AWAY_REASONS = new Set(["database-unavailable"]);
const AWAY_STATUS = new Set([502, 503, 504]);
/** What a browser's fetch, the tRPC client or the stream say when no answer came. */
const AWAY_TEXT = /fetch failed|Failed to fetch|NetworkError|Load failed|ECONNREFUSED|ECONNRESET|Unexpected token|is not valid JSON|Unable to transform response|^stream:|network error|Market Manager is not reachable|socket hang up/i;

export function isOutage(error: unknown): boolean {
  if (error == null) return false;
  const data = (error as { data?: { reason?: { code?: unknown } | null; httpStatus?: unknown; code?: unknown } | null }).data;
  const reason = data?.reason?.code;
  if (typeof reason === "string") return AWAY_REASONS.has(reason);
  if (typeof data?.httpStatus === "number") return AWAY_STATUS.has(data.httpStatus);
  const message = error instanceof Error ? error.message : typeof error === "string" ? error : "";
  // The tRPC client got no answer in the market's shape at all, or the text says no answer came.
  const fromClient = (error as { name?: unknown }).name === "TRPCClientError";
  return (fromClient && !data?.code) || AWAY_TEXT.test(message);
}

import { createTRPCClient, httpLink } from "@trpc/client";
import type { AppRouter } from "@cyclemarket/market-manager/router";

/** The market's tRPC endpoint: URL may be the web app's address or the Market Manager's (both serve /api). */
export const apiBase = (url: string) => url.replace(/\/+$/, "") + "/api";

/** A typed client of the market's API, authenticated by a bearer token or other headers (a session cookie). */
export function marketClient(url: string, headers: Record<string, string>) {
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${apiBase(url)}/trpc`, headers })] });
}
export type MarketClient = ReturnType<typeof marketClient>;

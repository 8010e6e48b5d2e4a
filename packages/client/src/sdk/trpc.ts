import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink, type TRPCClient } from "@trpc/client";
import { EventSource } from "eventsource";
import type { AppRouter } from "@cyclemarket/market-manager/router";

/** The market's tRPC endpoint: URL may be the web app's address or the Market Manager's (both serve /api). */
export const apiBase = (url: string) => url.replace(/\/+$/, "") + "/api";

/**
 * A typed client of the market's API, authenticated by a bearer token or other headers (a session
 * cookie). Queries and mutations are plain HTTP; subscriptions (a job's progress and outputs) are
 * server-sent events carrying the same headers.
 */
export function marketClient(url: string, headers: Record<string, string>): MarketClient {
  const endpoint = `${apiBase(url)}/trpc`;
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({
          url: endpoint,
          EventSource,
          eventSourceOptions: { fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, ...headers } }) },
        }),
        false: httpLink({ url: endpoint, headers }),
      }),
    ],
  });
}
export type MarketClient = TRPCClient<AppRouter>;

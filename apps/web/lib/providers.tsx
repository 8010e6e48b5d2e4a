"use client";
import { useState, type ReactNode } from "react";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { TRPCProvider, type AppRouter } from "./trpc";
import { isOutage } from "./outage";
import { ConnectionBanner } from "@/components/connection-banner";

function makeQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        // While the market is away, ask again until it is back: the query keeps the data it has
        // (the page keeps what it showed) and the connection banner says it is reconnecting.
        // A refusal (403, 404, a bad input) will not change by asking again.
        retry: (failures, error) => isOutage(error) || (failures < 2 && !isClientError(error)),
        retryDelay: (failures) => Math.min(500 * 2 ** failures, 4_000),
        refetchOnWindowFocus: false,
      },
    },
  });
}

function isClientError(error: unknown): boolean {
  const status = (error as { data?: { httpStatus?: number } } | null)?.data?.httpStatus;
  return typeof status === "number" && status >= 400 && status < 500;
}

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      // Same origin: app/api/[...path]/route.ts forwards /api/* to the Market Manager. Plain JSON,
      // no transformer. Subscriptions (live.*) are server-sent events; the session cookie goes with them.
      links: [
        splitLink({
          condition: (op) => op.type === "subscription",
          true: httpSubscriptionLink({ url: "/api/trpc" }),
          false: splitLink({
            // A job's submission or quote can be megabytes: sent alone, the Market Manager parses it
            // off its main thread (a batch carrying one beside other calls is limited to 1 MiB).
            condition: (op) => op.path === "jobs.submit" || op.path === "jobs.quote",
            true: httpLink({ url: "/api/trpc" }),
            // The Market Manager refuses a request of more calls than API_MAX_BATCH_CALLS (20 by default).
            false: httpBatchLink({ url: "/api/trpc", maxItems: 10 }),
          }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <ConnectionBanner />
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}

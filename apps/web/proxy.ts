import { NextResponse, type NextRequest } from "next/server";
import { newNonce, pagePolicy } from "@/lib/csp";

// Every page gets its Content-Security-Policy here, with a nonce of its own: Next.js reads the
// nonce from the request's policy while it renders and puts it on every script it writes
// (which is why every page renders per request; see app/layout.tsx). The bundles and /api are
// not pages: next.config.ts gives them a fixed policy.
export function proxy(request: NextRequest) {
  const policy = pagePolicy(newNonce(), process.env.NODE_ENV === "development");
  const headers = new Headers(request.headers);
  headers.set("content-security-policy", policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", policy);
  return response;
}

export const config = {
  matcher: [
    {
      // Not the bundles, not /api: everything else is a page (or its not-found answer).
      source: "/((?!api/|_next/static/|_next/image).*)",
      // A prefetch fetches a page's data, never a document, so it needs no nonce.
      missing: [
        { type: "header", key: "next-router-prefetch" },
        { type: "header", key: "purpose", value: "prefetch" },
      ],
    },
  ],
};

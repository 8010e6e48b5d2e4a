// The Content-Security-Policy the web app sends. Pages get a fresh nonce per request from
// proxy.ts: Next.js puts it on its own scripts (the framework, the page's bundles, the inline
// boot data), and 'strict-dynamic' lets those load the chunks they need; no other script runs,
// inline or injected. What else the app does is allowed by name and nothing more: WebAssembly
// compiled in the page and in the producer's Web Workers ('wasm-unsafe-eval', never
// 'unsafe-eval' outside `next dev`), module workers from this origin, calls and live streams to
// this origin's /api (the Market Manager is reached through it), images it draws (data:, blob:),
// its own style sheets (element styles need the nonce; style attributes, which React and uPlot
// set, are allowed). No page may be framed.

/** A policy's directives in order; a nonce, when given, is what a page's scripts and style elements must carry. */
function directives(nonce: string | null, dev: boolean): string[] {
  const scripts = nonce ? [`'nonce-${nonce}'`, "'strict-dynamic'"] : [];
  return [
    "default-src 'self'",
    ["script-src 'self'", ...scripts, "'wasm-unsafe-eval'", ...(dev ? ["'unsafe-eval'"] : [])].join(" "),
    "worker-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data: blob:",
    // `next dev` injects style elements without the nonce.
    nonce && !dev ? `style-src 'self' 'nonce-${nonce}'` : "style-src 'self' 'unsafe-inline'",
    "style-src-attr 'unsafe-inline'",
    "font-src 'self' data:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ];
}

/** The policy of a page, with this request's nonce. */
export const pagePolicy = (nonce: string, dev = false) => directives(nonce, dev).join("; ");

/**
 * The policy of everything proxy.ts does not see: the bundles themselves (a Web Worker runs
 * under its own script's policy, so this is the producer's sandbox's) and /api's answers.
 */
export const assetPolicy = (dev = false) => directives(null, dev).join("; ");

/** A nonce no one can guess: 128 random bits, base64. */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}

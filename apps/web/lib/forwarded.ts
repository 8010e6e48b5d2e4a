// Set by the web app's server (server.ts) in the process it runs: every request's X-Forwarded-For
// was then written by that server from the socket it saw. Under `next start` or `next dev` alone
// it is unset, and a client's own header is not passed on (the Market Manager then counts every
// client as the web app's address: one shared limit, never a dodged one).
export const FORWARDED_BY_SERVER = Symbol.for("cyclemarket.web.forwarded-by-server");

export const forwardedByServer = () => (globalThis as Record<symbol, unknown>)[FORWARDED_BY_SERVER] === true;

import type { IncomingMessage, IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import { networkOf } from "./signup-limit.ts";

// Who the client is, for the per-address limits (sign-in, sign-up, every other auth request) and
// for Secure cookies. An X-Forwarded-For is believed only as far as it was written by proxies the
// market trusts: read from the right, each entry was appended by the hop after it, so the client
// is the first entry, from the right, that is not itself a trusted proxy. Anything a client wrote
// further left is never read. The web app's server (apps/web/server.ts) writes the header from
// the socket it saw, so a client's own X-Forwarded-For never reaches the Market Manager unchecked.

/** Where `npm start` runs the web app: the Market Manager believes it as a proxy whatever TRUSTED_PROXIES says. */
export const WEB_APP_ADDRESSES: readonly string[] = ["127.0.0.1", "::1"];

/** An address as the socket or a header gives it, IPv4 mapped into IPv6 written as IPv4. */
const plain = (address: string) => address.trim().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "").toLowerCase();

/** TRUSTED_PROXIES as written (comma-separated addresses) made into the set both servers test against. */
export function proxySet(addresses: readonly string[]): ReadonlySet<string> {
  return new Set(addresses.map(plain).filter(Boolean));
}

/** The proxies the Market Manager believes: the web app on this host, and TRUSTED_PROXIES. */
export const managerProxies = (configured: readonly string[]) => proxySet([...WEB_APP_ADDRESSES, ...configured]);

/** The address the request came from on the socket. */
export const peerAddress = (req: IncomingMessage) => plain(req.socket.remoteAddress ?? "unknown");

/** The X-Forwarded-For entries, left to right, however many headers carried them. */
function entries(header: string | string[] | undefined): string[] {
  const text = Array.isArray(header) ? header.join(",") : (header ?? "");
  return text.split(",").map((s) => s.trim()).filter(Boolean);
}

/**
 * The client's address: the socket's peer unless it is a trusted proxy; then, walking the
 * forwarded entries from the right, the first that is not a trusted proxy. An entry that is not an
 * address ends the walk at the last hop known (a broken chain shares its proxy's limits rather
 * than naming anyone); a chain of trusted proxies only gives its leftmost.
 */
export function forwardedClient(peer: string, forwardedFor: string | string[] | undefined, trusted: ReadonlySet<string>): string {
  let client = plain(peer);
  const chain = entries(forwardedFor);
  for (let i = chain.length - 1; i >= 0 && trusted.has(client); i--) {
    const hop = plain(chain[i]!);
    if (!isIP(hop)) break;
    client = hop;
  }
  return client;
}

/**
 * The network (/24 or /48) of the client's address (signup-limit.ts networkOf), where it says
 * something of who the client is: null when it is not an address, or is this host's own loopback
 * (every local client shares it, whoever they are).
 */
export function clientNetwork(req: IncomingMessage, trusted: ReadonlySet<string>): string | null {
  const address = clientAddress(req, trusted);
  if (!isIP(address) || address === "::1" || address.startsWith("127.")) return null;
  return networkOf(address);
}

/** The client's address for a request the Market Manager received. */
export function clientAddress(req: IncomingMessage, trusted: ReadonlySet<string>): string {
  return forwardedClient(peerAddress(req), req.headers["x-forwarded-for"], trusted);
}

/** The request came over HTTPS: the socket is TLS, or a trusted proxy says so (X-Forwarded-Proto). */
export function overHttps(req: IncomingMessage, trusted: ReadonlySet<string>): boolean {
  if ("encrypted" in req.socket && req.socket.encrypted) return true;
  const proto = req.headers["x-forwarded-proto"];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(",")[0]?.trim().toLowerCase();
  return trusted.has(peerAddress(req)) && first === "https";
}

/**
 * The forwarded headers as the web app's server passes a request on (apps/web/server.ts): from a
 * peer in TRUSTED_PROXIES, its X-Forwarded-For with the peer appended, and its X-Forwarded-Proto
 * and -Host; from anyone else, only the peer's address and what the socket itself says, whatever
 * the client wrote. The headers are changed in place, before Next.js reads them.
 */
export function setForwardedHeaders(headers: IncomingHttpHeaders, peer: string, encrypted: boolean, trusted: ReadonlySet<string>): void {
  const from = plain(peer);
  if (trusted.has(from)) {
    const chain = entries(headers["x-forwarded-for"]);
    headers["x-forwarded-for"] = [...chain, from].join(", ");
    return;
  }
  headers["x-forwarded-for"] = from;
  headers["x-forwarded-proto"] = encrypted ? "https" : "http";
  delete headers["x-forwarded-host"];
  delete headers["x-forwarded-port"];
}

import { describe, expect, it } from "vitest";
import { forwardedClient, managerProxies, proxySet, setForwardedHeaders } from "./client-address.ts";

describe("the client's address", () => {
  const manager = managerProxies(["192.0.2.10"]);

  it("is the socket's peer when the peer is not a trusted proxy, whatever the header says", () => {
    expect(forwardedClient("198.51.100.1", "203.0.113.5", manager)).toBe("198.51.100.1");
    expect(forwardedClient("127.0.0.2", "203.0.113.5", manager)).toBe("127.0.0.2");
  });

  it("is the first entry from the right that is not a trusted proxy", () => {
    // The web app on loopback forwards what a TLS proxy of TRUSTED_PROXIES appended; the client wrote the left part.
    expect(forwardedClient("127.0.0.1", "6.6.6.6, 203.0.113.5, 192.0.2.10", manager)).toBe("203.0.113.5");
    expect(forwardedClient("::ffff:127.0.0.1", ["6.6.6.6", "203.0.113.5"], manager)).toBe("203.0.113.5");
  });

  it("stops at an entry that is not an address, at the last hop known", () => {
    expect(forwardedClient("127.0.0.1", "203.0.113.5, not-an-address", manager)).toBe("127.0.0.1");
    expect(forwardedClient("127.0.0.1", "", manager)).toBe("127.0.0.1");
  });

  it("is the leftmost when every hop is trusted", () => {
    expect(forwardedClient("127.0.0.1", "192.0.2.10, 127.0.0.1", manager)).toBe("192.0.2.10");
  });
});

describe("the web app's forwarded headers", () => {
  const web = proxySet(["192.0.2.10"]);

  it("name only the peer when the peer is not a trusted proxy, and drop what the client claimed", () => {
    const headers: Record<string, string | string[] | undefined> = { "x-forwarded-for": "1.2.3.4", "x-forwarded-proto": "https", "x-forwarded-host": "evil.example" };
    setForwardedHeaders(headers, "::ffff:198.51.100.7", false, web);
    expect(headers).toEqual({ "x-forwarded-for": "198.51.100.7", "x-forwarded-proto": "http" });
  });

  it("append the peer to a trusted proxy's chain and keep its protocol", () => {
    const headers: Record<string, string | string[] | undefined> = { "x-forwarded-for": "203.0.113.5", "x-forwarded-proto": "https" };
    setForwardedHeaders(headers, "192.0.2.10", false, web);
    expect(headers).toEqual({ "x-forwarded-for": "203.0.113.5, 192.0.2.10", "x-forwarded-proto": "https" });
    // The Market Manager, reached from the web app on loopback, then finds the client.
    expect(forwardedClient("127.0.0.1", headers["x-forwarded-for"], managerProxies(["192.0.2.10"]))).toBe("203.0.113.5");
  });
});

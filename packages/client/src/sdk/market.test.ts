import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MarketError } from "./errors.ts";
import { connect } from "./market.ts";

// A market stand-in that only records what the SDK sent: the token check happens before any request.
let url = "";
const seen: IncomingHttpHeaders[] = [];
const server = createServer((req, res) => {
  seen.push(req.headers);
  res.writeHead(401).end();
});
beforeAll(async () => {
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

describe("connect", () => {
  it("refuses a missing or blank token in words, before asking the market anything", () => {
    for (const token of [undefined, "", "  "]) {
      const attempt = () => connect({ url, token });
      expect(attempt).toThrow(MarketError);
      expect(attempt).toThrow(/No API token was given.*CYCLEMARKET_TOKEN/);
    }
    expect(seen).toHaveLength(0);
  });

  it("sends a given token as the bearer, without the spaces pasted around it", async () => {
    const market = connect({ url, token: " cmk_pasted \n" });
    await expect(market.uploadModule(new Uint8Array([0, 97, 115, 109]))).rejects.toBeInstanceOf(MarketError);
    expect(seen.at(-1)?.authorization).toBe("Bearer cmk_pasted");
  });
});

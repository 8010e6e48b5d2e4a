// One person's accounts in an attack on an open market: producers with a machine each, with or
// without standing, and what all their accounts hold together.
import { afterAll, beforeAll } from "vitest";
import { startTestMarket, type TestMarket } from "./market.ts";
import { marketMicro } from "./books.ts";
import { giveStanding } from "./standing.ts";

type Client = Awaited<ReturnType<TestMarket["signUp"]>>;

export interface Producer {
  client: Client;
  worker: ReturnType<TestMarket["tokenClient"]>;
  machineId: string;
}

/** A producer account `name` with one 4-slot machine asking `pricePerSecond`, and standing when asked. */
export async function producerWithMachine(market: TestMarket, name: string, pricePerSecond: number, standing: boolean): Promise<Producer> {
  const email = `${name}@${name}.test`;
  const client = await market.signUp(email, ["producer"]);
  if (standing) await giveStanding(market.manager.services.db, email);
  const worker = market.tokenClient((await client.account.tokens.create.mutate({ name })).token);
  const { machineId } = await worker.worker.register.mutate({ name, kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond, userAgent: "test" });
  return { client, worker, machineId };
}

/** Everything an account holds: its consumer and producer balances and its jobs' escrow. */
export async function holdings(c: Client) {
  const s = await c.ledger.statement.query();
  return s.consumerBalance + s.producerBalance + s.inEscrow;
}

/**
 * A market with a reserve, started before the file's tests and stopped after them (`env` adds to
 * its settings): the market, its database, the market's account in credits, and producers on it.
 */
export function reserveMarket(reserve = 100_000, env: Record<string, string> = {}) {
  let market: TestMarket | undefined;
  beforeAll(async () => {
    market = await startTestMarket({ MARKET_RESERVE: String(reserve), ...env });
  });
  afterAll(() => market?.stop());
  const live = () => {
    if (!market) throw new Error("the market has not started");
    return market;
  };
  return {
    market: live,
    db: () => live().manager.services.db,
    marketBalance: async () => Number(await marketMicro(live().manager.services.db)) / 1e6,
    producer: (name: string, pricePerSecond: number, standing: boolean) => producerWithMachine(live(), name, pricePerSecond, standing),
  };
}

/** An open market (every producer earns standing, or has it given) with a reserve: reserveMarket. */
export const openMarket = (reserve = 100_000) => reserveMarket(reserve, { TRUST_ALL_PRODUCERS: "0" });

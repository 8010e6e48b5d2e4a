/** What the live market tells its streams after a change (Market.emit). */
export type MarketEvent =
  | { kind: "job"; jobId: string; ownerId: string }
  | { kind: "machine"; machineId: string }
  /** Tasks joined these machines' queues: placed, placed again, or moved. */
  | { kind: "queue"; machineIds: string[] };

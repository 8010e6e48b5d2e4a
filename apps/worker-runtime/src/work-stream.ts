// The work stream (`live.work`) as the producer loop hears it: the tRPC subscription's callbacks
// mapped onto WorkStreamHandlers, shared by the Node worker's client and the /produce page's.
import { WorkOffer, type WorkStreamHandlers } from "./api.ts";

/** What a tRPC client's `subscribe` takes, as far as the work stream uses it. */
export interface WorkSubscriptionCallbacks {
  onData(event: { id: string; data: unknown }): void;
  onConnectionStateChange(state: { state: "idle" | "connecting" | "pending" }): void;
  onError(error: unknown): void;
  onComplete(): void;
}

export function workStreamCallbacks(handlers: WorkStreamHandlers): WorkSubscriptionCallbacks {
  return {
    // Offers are tracked events: { id, data }; the id is what a reconnect resumes from.
    onData: (event) => handlers.offer(WorkOffer.parse(event.data)),
    onConnectionStateChange: ({ state }) => {
      if (state === "pending") handlers.state("live");
      else if (state === "connecting") handlers.state("reconnecting");
    },
    onError: (error) => handlers.end(error),
    onComplete: () => handlers.end(null),
  };
}

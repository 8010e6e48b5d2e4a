/** The time as the market reads it: milliseconds since the epoch (a test's clock can be set). */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

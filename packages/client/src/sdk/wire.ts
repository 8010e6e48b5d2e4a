// The market's answers as the SDK hands them over, each named once. Here they are read from the
// Market Manager's router; the published declarations (scripts/types.mjs) write each one out in
// full, so a project that installs the client needs neither the router nor tRPC's types.
import type { MarketClient } from "./trpc.ts";

type Jobs = MarketClient["jobs"];

/** A job as its page shows it: status, counts, decision, money, and its tasks. */
export type JobView = Awaited<ReturnType<Jobs["get"]["query"]>>;
/** What the market would decide now for a job, and, when admitted, what it would hold of the caller's balance. */
export type Quote = Awaited<ReturnType<Jobs["quote"]["mutate"]>>;
/** The market's decision on a submitted job. */
export type Decision = Awaited<ReturnType<Jobs["submit"]["mutate"]>>["decision"];
/** What cancelling a job did, and what the job was charged. */
export type Cancelled = Awaited<ReturnType<Jobs["cancel"]["mutate"]>>;
/** One accepted task output as the API sends it (bytes in base64). */
export type OutputRow = Awaited<ReturnType<Jobs["outputs"]["query"]>>[number];

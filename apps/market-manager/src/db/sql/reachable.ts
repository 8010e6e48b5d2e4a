import { statement } from "./statement.ts";

/** The smallest round trip: whether the database answers (/readyz, http/ops-routes.ts). */
export const reachable = statement<Record<string, never>, { one: number }>("reachable", () => `SELECT 1 AS one`);

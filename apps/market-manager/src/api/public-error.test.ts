import { describe, expect, it } from "vitest";
import { databaseAway } from "./public-error.ts";

describe("an error that says the database is away", () => {
  it("is told apart from a fault of the request, through the chain of causes", () => {
    expect(databaseAway(new Error("query failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }) }))).toBe(true);
    expect(databaseAway(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(databaseAway(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }))).toBe(true);
    expect(databaseAway(new Error("Cannot read properties of undefined (reading 'id')"))).toBe(false);
    expect(databaseAway(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
  });
});

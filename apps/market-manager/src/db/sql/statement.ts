// Every statement the Market Manager sends lives in this folder, one file per thing it does, each
// built by `statement`: a name, its text written with named parameters, and the type of its rows.
// The text reads `${p.jobId}` where it takes a parameter; `statement` turns the names into
// PostgreSQL's positional placeholders in the order they first appear, and `valuesOf` lays an
// object of values out in that order, so a statement's parameters are an object checked by the
// compiler, never a list counted by hand. A statement is sent on the connection its caller picks
// (runners.ts). test/integration/statements.test.ts prepares every one of them on a migrated
// database, and one-home.test.ts fails on SQL anywhere else in the Market Manager.

/** What a statement's text sees of its parameters: each name is its placeholder (`$n`). */
export type Placeholders<P> = { readonly [K in keyof P]-?: string };

export interface Statement<P extends object, R> {
  readonly name: string;
  readonly text: string;
  /** The parameters' names in placeholder order. */
  readonly names: readonly (keyof P & string)[];
  /** Only carries the row type. */
  readonly row?: R;
}

const registered: Statement<object, unknown>[] = [];

/**
 * A statement named `name` (also the name it is prepared under on a connection). `build` writes
 * its text; every parameter it reads becomes a placeholder, numbered in order of first use.
 */
export function statement<P extends object, R = Record<string, unknown>>(name: string, build: (p: Placeholders<P>) => string): Statement<P, R> {
  const names: string[] = [];
  const p = new Proxy({} as Placeholders<P>, {
    get(_, key) {
      if (typeof key !== "string") throw new Error(`statement ${name}: a parameter is named by a string`);
      let i = names.indexOf(key);
      if (i < 0) i = names.push(key) - 1;
      return `$${i + 1}`;
    },
  });
  const s: Statement<P, R> = { name, text: build(p), names: names as (keyof P & string)[] };
  if (registered.some((r) => r.name === name)) throw new Error(`two statements are named ${name}`);
  registered.push(s as Statement<object, unknown>);
  return s;
}

/** Every statement made so far: those of every module of this folder once each is imported (statements.test.ts). */
export const allStatements = (): readonly Statement<object, unknown>[] => registered;

/** The values of `params` in the order of `s`'s placeholders; a missing one is an error, not a NULL. */
export function valuesOf<P extends object>(s: Statement<P, unknown>, params: P): unknown[] {
  return s.names.map((n) => {
    const v = params[n];
    if (v === undefined) throw new Error(`statement ${s.name}: no value for ${n}`);
    return v;
  });
}

/** Runs one statement's text with its values in order: a connection of the journal's, a transaction, the pool. */
export type Runner = (name: string, text: string, values: unknown[]) => Promise<unknown>;

/** The rows of `s` with `params`, sent through `run`. */
export async function runStatement<P extends object, R>(run: Runner, s: Statement<P, R>, params: P): Promise<R[]> {
  try {
    return (await run(s.name, s.text, valuesOf(s, params))) as R[];
  } catch (e) {
    throw refusalOf(e) ?? e;
  }
}

/**
 * A statement's own refusal: it calls `market_refuse(code, detail)` (migration
 * 20261128171000_market_refuse) where a condition it checks does not hold, which raises SQLSTATE
 * MK001 with the code as its message and the detail as JSON, and undoes the whole statement. The
 * caller gets a `StatementRefused` with the code and detail as values.
 */
export class StatementRefused extends Error {
  constructor(
    readonly refusal: string,
    readonly detail: Record<string, unknown>,
  ) {
    super(`refused: ${refusal}`);
  }
}

/** The floor of a ledger account was crossed (the check constraint of migration 20261128165437_piece_rates). */
export class FloorCrossed extends Error {
  constructor() {
    super("a ledger account would go below its floor");
  }
}

const REFUSED = "MK001";
const CHECK_VIOLATION = "23514";
/** A ledger statement's refusal of a debit of an account that did not exist (ledger-rows.ts ledgerChecks). */
const ACCOUNT_FLOOR = "account-floor";

/** The market's refusal carried by a database error, wherever the driver or Prisma put it. */
export function refusalOf(e: unknown): StatementRefused | FloorCrossed | null {
  for (let x: unknown = e, depth = 0; x && typeof x === "object" && depth < 6; depth++) {
    if (x instanceof StatementRefused || x instanceof FloorCrossed) return x;
    const o = x as { code?: unknown; message?: unknown; detail?: unknown; originalCode?: unknown; originalMessage?: unknown };
    const code = o.code ?? o.originalCode;
    if (code === REFUSED) {
      const refusal = String(o.message ?? o.originalMessage ?? "");
      return refusal === ACCOUNT_FLOOR ? new FloorCrossed() : new StatementRefused(refusal, parseDetail(o.detail));
    }
    // The schema's one check constraint is the ledger's floor (LedgerAccount_floor).
    if (code === CHECK_VIOLATION) return new FloorCrossed();
    x = (o as { cause?: unknown }).cause ?? (o as { meta?: { driverAdapterError?: unknown } }).meta?.driverAdapterError;
  }
  return null;
}

function parseDetail(d: unknown): Record<string, unknown> {
  if (typeof d !== "string") return {};
  try {
    const v: unknown = JSON.parse(d);
    return v && typeof v === "object" ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

// The connections a statement of this folder is sent on (runStatement's `run`). Which one a
// caller picks is a matter of where it stands, not of the statement: the journal's entries go on
// its one ordered connection (Database.journal), the pages' reads on the readers
// (Database.reads), a transaction's statements on the transaction. Prisma reads a bigint column
// as a bigint and the driver as text, so the statements here send money back as text (`::text`):
// a row's type then holds whichever way it was sent.
import type pg from "pg";
import type { Prepared, Sequence } from "../client.ts";
import { preparedParameter } from "../array-literal.ts";
import type { Runner } from "./statement.ts";

/** What Prisma's client and its transactions both offer for a statement's text. */
interface RawClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

/**
 * Through Prisma's raw query: the client's pool, or a transaction it is part of. Not prepared by
 * name: Prisma sends each statement as it comes.
 */
export const viaPrisma =
  (client: RawClient): Runner =>
  (_name, text, values) =>
    client.$queryRawUnsafe(text, ...values);

/**
 * Prepared once per connection under the statement's name: the readers (Database.reads),
 * Prisma's own connections outside a transaction (Database.shared), the journal's connection in
 * order (Database.journal). Arrays go as the literals the driver would write (array-literal.ts).
 */
export const prepared =
  (on: Prepared | Sequence): Runner =>
  (name, text, values) =>
    on.rows(name, text, values.map(preparedParameter));

/** On a connection of one's own (an intake thread's), unnamed: a statement parsed each time it is sent. */
export const onConnection =
  (c: pg.Pool | pg.ClientBase): Runner =>
  async (_name, text, values) =>
    (await c.query(text, values)).rows;

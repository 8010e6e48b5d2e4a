// The connections a statement of this folder is sent on (runStatement's `run`). Which one a
// caller picks is a matter of where it stands, not of the statement: the journal's entries go on
// its one ordered connection (tasks/report-batch.ts inOrder), the pages' reads on the readers, a
// transaction's statements on the transaction. Prisma reads a bigint column as a bigint and the
// driver as text, so the statements here send money back as text (`::text`): a row's type then
// holds whichever way it was sent.
import type pg from "pg";
import { poolOf, preparedRows, readerOf, type Db } from "../client.ts";
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

/** On the pages' readers (db/client.ts readerOf), prepared once per connection under the statement's name. */
export const onReaders =
  (db: Db): Runner =>
  (name, text, values) =>
    preparedRows(db, readerOf(db), name, text, values);

/**
 * Straight on the client's pool (db/client.ts poolOf), prepared once per connection under the
 * statement's name, its arrays written as literals (array-literal.ts): no Prisma query to build
 * on the market's thread. Through Prisma for a client made otherwise.
 */
export const onPool = (db: Db): Runner => {
  const pool = poolOf(db);
  if (!pool) return viaPrisma(db);
  return async (name, text, values) => (await pool.query({ name, text, values: values.map(preparedParameter) })).rows;
};

/** On a connection of one's own (an intake thread's), unnamed: a statement parsed each time it is sent. */
export const onConnection =
  (c: pg.Pool | pg.ClientBase): Runner =>
  async (_name, text, values) =>
    (await c.query(text, values)).rows;

// A sync's own connection, for what the pool cannot give one for. `refsync sync` holds one
// connection all run long for its claim on its runs (runs.ts); when Postgres refuses the pool a new
// connection, the run's refused lists are recorded and the run closed on that one instead, so it
// is never left `running` for a process that is gone.
import type { Connection, Database, DatabaseKind } from '../../db/database.ts';

/**
 * The transaction open on `conn` as a Database: each transaction asked of it is a savepoint in it,
 * committed with it (RunClaim.release). Statements given to run at commit run at the savepoint's
 * end: a NOTIFY is still sent only when the whole transaction commits.
 */
export function insideOpenTransaction(conn: Connection, kind: DatabaseKind): Database {
  let savepoints = 0;
  const transaction: Connection['transaction'] = async (fn, opening) => {
    const name = `claim_${++savepoints}`;
    await conn.query(`savepoint ${name}`);
    try {
      const opened = opening === undefined ? [] : (await conn.query<Record<string, unknown>>(opening)).rows;
      const closing: string[] = [];
      const result = await fn(conn, opened, (statement) => closing.push(statement));
      for (const statement of closing) await conn.query(statement);
      await conn.query(`release savepoint ${name}`);
      return result;
    } catch (err) {
      await conn.query(`rollback to savepoint ${name}`).catch(() => undefined);
      throw err;
    }
  };
  const held: Connection = {
    query: (text, params) => conn.query(text, params),
    script: (statements) => conn.script(statements),
    transaction,
    begin: () => Promise.reject(new Error('a transaction of its own cannot begin inside the run claim')),
    alone: (statement) => transaction(async (_tx, opened) => opened, statement),
  };
  return {
    kind,
    ...held,
    withConnection: (fn) => fn(held),
    sqlSession: () => Promise.reject(new Error("a user's SQL does not run inside the run claim")),
    probe: () => conn.query('select 1').then(() => undefined),
    close: async () => undefined,
  };
}

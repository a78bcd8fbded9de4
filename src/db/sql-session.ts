// SQL typed by a person (`refsync sql`, its prompt) on one connection held for the whole session: a
// BEGIN typed at the prompt and the ROLLBACK typed minutes later reach the same server session,
// whatever the pool does with its idle connections meanwhile. Read-only unless asked otherwise.
import type pg from 'pg';
import { isConnectionLost, connectionErrorText } from './connection-lost.ts';

/** One statement's answer to SQL typed by a person (`refsync sql`): its columns and rows, in order. */
export interface SqlResult {
  columns: string[];
  rows: unknown[][];
  /** Rows a write changed, where the driver says. */
  affectedRows: number | null;
}

export interface SqlSession {
  /**
   * Runs SQL as typed, one statement or several in one simple-protocol message, and returns every
   * statement's columns and rows (rows as arrays: `select 1, 1` has two columns of the same name).
   */
  run(text: string): Promise<SqlResult[]>;
  /** Gives the connection back; an open transaction is rolled back by the server. */
  close(): Promise<void>;
}

export interface SqlSessionOptions {
  /** Let the SQL change data; without it every transaction is read-only. */
  write: boolean;
}

/** The session's connection broke inside a transaction: nothing of it was committed. */
export class TransactionLostError extends Error {
  readonly code = 'transaction_lost';
}

/** node-postgres answers one Result for one statement and an array for several. */
export async function pgRunSql(client: pg.PoolClient, text: string): Promise<SqlResult[]> {
  const answer = (await client.query({ text, rowMode: 'array' })) as pg.QueryArrayResult | pg.QueryArrayResult[];
  return (Array.isArray(answer) ? answer : [answer]).map((r) => ({
    columns: (r.fields ?? []).map((f) => f.name),
    rows: r.rows,
    affectedRows: r.fields?.length ? null : r.rowCount,
  }));
}

/** The answer to a ROLLBACK: what psql prints as ROLLBACK, `ok` here. */
const ended: SqlResult[] = [{ columns: [], rows: [], affectedRows: null }];

/** Only ROLLBACK (or ABORT) ends a transaction whose connection was lost. */
const rollbackOnly = /^\s*(rollback|abort)\s*;?\s*$/i;

/**
 * A session on Postgres. Read-only by `SET TRANSACTION READ ONLY` sent in the same message as the
 * SQL whenever no transaction is open (a message of several statements is one transaction, and a
 * BEGIN among them continues it): a session-level setting would stay on a server connection that a
 * transaction-mode pooler hands to other clients afterwards. A guard against mistakes, not a
 * permission: `BEGIN READ WRITE` or a COMMIT inside the message leaves it; the reader role
 * (refdata_reader) is the permission.
 *
 * A connection lost inside a transaction is said, and every statement but ROLLBACK is refused until
 * the user acknowledges it: the next statement on a new connection would otherwise run outside the
 * transaction the user believes open, and commit on its own.
 */
export function pgSqlSession(connect: () => Promise<pg.PoolClient>, options: SqlSessionOptions): SqlSession {
  let client: pg.PoolClient | undefined;
  let broken: Error | undefined;
  let transactionLost = false;
  const onError = (err: Error) => {
    broken = err;
  };
  const drop = () => {
    client?.off('error', onError);
    client?.release(broken ?? true);
    client = undefined;
    broken = undefined;
  };
  return {
    async run(text) {
      if (transactionLost) {
        if (!rollbackOnly.test(text)) {
          throw new TransactionLostError('the transaction was lost with its connection and nothing of it was committed; type ROLLBACK to go on');
        }
        transactionLost = false;
        return ended;
      }
      if (!client) {
        client = await connect();
        client.on('error', onError);
      }
      const status = client.getTransactionStatus() ?? 'I';
      const guarded = !options.write && status === 'I';
      try {
        const results = await pgRunSql(client, guarded ? `set transaction read only;\n${text}` : text);
        return guarded ? results.slice(1) : results;
      } catch (err) {
        if (!broken && !isConnectionLost(err)) throw err;
        broken ??= err as Error;
        const why = connectionErrorText(broken);
        drop();
        if (status !== 'I') {
          transactionLost = true;
          throw new TransactionLostError(
            `the connection to the database was lost inside a transaction (${why}): the server rolled it back, nothing of it was committed; type ROLLBACK to go on`,
          );
        }
        throw new Error(`the connection to the database was lost (${why}); the next statement opens a new one`, { cause: err });
      }
    },
    async close() {
      drop();
    },
  };
}

/** What the embedded session needs of PGlite. */
interface PgliteExec {
  exec(text: string, options: { rowMode: 'array' }): Promise<Array<{ fields: Array<{ name: string }>; rows: unknown; affectedRows?: number }>>;
}

/**
 * A session on the embedded database: PGlite is one session in this process, which the command
 * alone holds (embedded-lock.ts), so the read-only default is the session's own setting.
 */
export function pgliteSqlSession(client: PgliteExec, options: SqlSessionOptions): SqlSession {
  let readOnly: Promise<unknown> | undefined;
  return {
    async run(text) {
      if (!options.write) await (readOnly ??= client.exec('set default_transaction_read_only = on', { rowMode: 'array' }));
      const results = await client.exec(text, { rowMode: 'array' });
      return results.map((r) => ({
        columns: r.fields.map((f) => f.name),
        rows: r.rows as unknown[][],
        affectedRows: r.fields.length ? null : (r.affectedRows ?? null),
      }));
    },
    async close() {
      if (readOnly) await client.exec('reset default_transaction_read_only', { rowMode: 'array' }).catch(() => undefined);
    },
  };
}

// The session behind `refsync sql` and its prompt, on a real Postgres and on PGlite: one connection
// for its whole life (a transaction survives a pause longer than the pool keeps idle connections),
// a connection lost inside a transaction said and never autocommitted around, and read-only unless
// asked to write.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { TransactionLostError, type SqlSession } from '../../src/db/sql-session.ts';
import { sqlResultsText } from '../../src/cli/output/sql-results.ts';
import { useTestDatabase } from '../helpers/db.ts';

const t = useTestDatabase();
let db: Database;
const sessions: SqlSession[] = [];

beforeAll(async () => {
  // Idle pooled connections close after 50 ms: a pause at the prompt outlasts them many times over.
  db = await openDatabase({ url: t.url, poolSize: 3, idleTimeoutMs: 50, applicationName: 'refsync-sql-session' });
  await t.db.query('create table public.typed (n int)');
});
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await db?.close();
});

async function session(write: boolean, on: Database = db): Promise<SqlSession> {
  const s = await on.sqlSession({ write });
  sessions.push(s);
  return s;
}

const value = async (s: SqlSession, sql: string) => (await s.run(sql))[0]!.rows[0]![0];
const count = async () => (await t.db.query<{ n: number }>('select count(*)::int as n from public.typed')).rows[0]!.n;

describe('refsync sql: one connection for the session', () => {
  it('BEGIN, a pause longer than the pool keeps idle connections, ROLLBACK: nothing was written', async () => {
    const s = await session(true);
    const pid = await value(s, 'select pg_backend_pid()');
    await s.run('begin');
    await s.run('insert into public.typed values (1)');
    await new Promise((resolve) => setTimeout(resolve, 400));
    // Other work on the pool meanwhile opens and closes connections of its own.
    await Promise.all([db.query('select 1'), db.query('select 2')]);
    expect(await value(s, 'select pg_backend_pid()')).toBe(pid);
    expect(sqlResultsText(await s.run('rollback'))).toBe('ok');
    expect(await count()).toBe(0);
  });

  it('a connection lost inside a transaction is said, and nothing runs until ROLLBACK acknowledges it', async () => {
    const s = await session(true);
    await s.run('begin; insert into public.typed values (2)');
    const pid = await value(s, 'select pg_backend_pid()');
    await t.db.query('select pg_terminate_backend($1)', [pid]);
    const lost = await s.run('insert into public.typed values (3)').catch((err: unknown) => err);
    expect(lost).toBeInstanceOf(TransactionLostError);
    expect((lost as Error).message).toMatch(
      /^the connection to the database was lost inside a transaction \(.+\): the server rolled it back, nothing of it was committed; type ROLLBACK to go on$/,
    );
    // Not run on a new connection outside the transaction the user believes open.
    const refused = await s.run('insert into public.typed values (4)').catch((err: unknown) => err);
    expect((refused as Error).message).toBe('the transaction was lost with its connection and nothing of it was committed; type ROLLBACK to go on');
    expect(await count()).toBe(0);
    expect(sqlResultsText(await s.run('rollback;'))).toBe('ok');
    // Then a new connection, as any statement outside a transaction.
    expect(await value(s, 'select pg_backend_pid()')).not.toBe(pid);
    await s.run('insert into public.typed values (5)');
    expect(await count()).toBe(1);
    await t.db.query('delete from public.typed');
  });

  it('a connection lost outside a transaction: the statement fails saying so, the next one opens a new connection', async () => {
    const s = await session(false);
    const pid = await value(s, 'select pg_backend_pid()');
    await t.db.query('select pg_terminate_backend($1)', [pid]);
    await expect(s.run('select 1')).rejects.toThrow(/^the connection to the database was lost \(.+\); the next statement opens a new one$/);
    expect(await value(s, 'select 1')).toBe(1);
  });
});

describe('refsync sql: read-only unless --write', () => {
  it('Postgres: writes, DDL and a BEGIN typed first are refused; reads answer; the settings it sends are not shown', async () => {
    const s = await session(false);
    await expect(s.run('insert into public.typed values (6)')).rejects.toThrow('cannot execute INSERT in a read-only transaction');
    await expect(s.run('create table public.made (a int)')).rejects.toThrow('cannot execute CREATE TABLE in a read-only transaction');
    await s.run('begin');
    await expect(s.run('insert into public.typed values (7)')).rejects.toThrow('read-only transaction');
    await s.run('rollback');
    expect(await s.run('select 1 as one; select 2 as two')).toEqual([
      { columns: ['one'], rows: [[1]], affectedRows: null },
      { columns: ['two'], rows: [[2]], affectedRows: null },
    ]);
    expect(await count()).toBe(0);
  });

  it("the guard is each transaction's, never the server session's (which a transaction-mode pooler hands on)", async () => {
    const s = await session(false);
    expect(await s.run("select current_setting('transaction_read_only') as tx, current_setting('default_transaction_read_only') as session")).toEqual([
      { columns: ['tx', 'session'], rows: [['on', 'off']], affectedRows: null },
    ]);
  });

  it('Postgres with --write: changes are made', async () => {
    const s = await session(true);
    expect(await s.run('insert into public.typed values (9)')).toEqual([{ columns: [], rows: [], affectedRows: 1 }]);
    expect(await count()).toBe(1);
    await t.db.query('delete from public.typed');
  });

  it('the embedded database: read-only by default, --write changes', async () => {
    const embedded = await openDatabase({ dataDir: 'memory://' });
    try {
      const readOnly = await session(false, embedded);
      await expect(readOnly.run('create table public.made (a int)')).rejects.toThrow('cannot execute CREATE TABLE in a read-only transaction');
      await expect(readOnly.run('begin; create table public.made (a int); commit')).rejects.toThrow('read-only transaction');
      await readOnly.run('rollback');
      await readOnly.close();
      const writable = await session(true, embedded);
      await writable.run('create table public.made (a int); insert into public.made values (1)');
      expect(await value(writable, 'select count(*)::int from public.made')).toBe(1);
      await writable.close();
    } finally {
      await embedded.close();
    }
  });
});

describe('refsync sql: headers escaped as cells are', () => {
  it('a column name with control characters shows them escaped, as a value with them does', () => {
    const text = sqlResultsText([{ columns: ['a\u001b[2Jb', 'c'], rows: [['x\u001b[2Jy', 'z']], affectedRows: null }]);
    expect(text).not.toContain('\u001b');
    expect(text.split('\n')[0]).toBe('a\\u001b[2Jb  c');
    expect(text.split('\n')[2]).toBe('x\\u001b[2Jy  z');
  });
});

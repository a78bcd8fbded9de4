import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { useTestDatabase } from '../helpers/db.ts';

// Queryable#script runs DDL (a view, its comments and grants) in one round trip on both drivers:
// in order, stopping at the first failure, all or nothing outside a transaction, and part of the
// transaction inside one. The per-list views rely on it to change together with their comments.

const t = useTestDatabase();
let pglite: Database;

beforeAll(async () => {
  pglite = await openDatabase({ dataDir: 'memory://' });
});
afterAll(async () => {
  await pglite?.close();
});

const backends: Array<[string, () => Database]> = [
  ['Postgres', () => t.db],
  ['PGlite', () => pglite],
];

async function tableExists(db: Database, name: string): Promise<boolean> {
  const { rows } = await db.query<{ ok: boolean }>('select to_regclass($1) is not null as ok', [`public.${name}`]);
  return rows[0]!.ok;
}

describe.each(backends)('script on %s', (_name, dbOf) => {
  it('runs the statements in order, a dollar-quoted body and a quoted literal included', async () => {
    const db = dbOf();
    await db.script([
      'create table script_order (n int, note text)',
      "insert into script_order values (1, 'it''s; first')",
      'create function script_order_next() returns int language sql as $$ select max(n) + 1 from script_order; $$',
      'insert into script_order select script_order_next(), $q$second$q$',
      "comment on table script_order is 'ends with a semicolon;'",
    ]);
    const { rows } = await db.query<{ n: number; note: string }>('select n, note from script_order order by n');
    expect(rows).toEqual([
      { n: 1, note: "it's; first" },
      { n: 2, note: 'second' },
    ]);
    const { rows: comment } = await db.query<{ c: string }>("select obj_description('public.script_order'::regclass) as c");
    expect(comment[0]!.c).toBe('ends with a semicolon;');
  });

  it('outside a transaction: a failing statement throws it, and nothing of the script stays', async () => {
    const db = dbOf();
    const failure = await db
      .script(['create table script_partial (n int)', 'insert into script_partial values (1)', 'select 1 / 0', 'create table script_after (n int)'])
      .catch((err: unknown) => err);
    expect((failure as { code?: string }).code).toBe('22012');
    expect(await tableExists(db, 'script_partial')).toBe(false);
    expect(await tableExists(db, 'script_after')).toBe(false);
    // The connection is usable after the failure.
    expect((await db.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('inside a transaction: part of it, rolled back with it', async () => {
    const db = dbOf();
    const rolledBack = new Error('rolled back on purpose');
    const thrown = await db
      .transaction(async (tx) => {
        await tx.script(['create table script_in_tx (n int)', 'insert into script_in_tx values (7)']);
        const { rows } = await tx.query<{ n: number }>('select n from script_in_tx');
        expect(rows).toEqual([{ n: 7 }]);
        throw rolledBack;
      })
      .catch((err: unknown) => err);
    expect(thrown).toBe(rolledBack);
    expect(await tableExists(db, 'script_in_tx')).toBe(false);
  });
});

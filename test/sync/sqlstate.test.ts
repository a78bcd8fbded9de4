import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrateDatabase } from '../../src/columns/migrate-views.ts';
import { DataRefusedError, listFailureOf } from '../../src/sync/outcome/failure.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { count, pipelineFixture } from './fixture.ts';

// A database error is the list's failure when the list's data caused it (SQLSTATE classes 22, 23,
// 54), else the database's state (retried as an outage). The classification reads the error's
// SQLSTATE, which node-postgres and PGlite each report in their own error class: both are checked
// with errors their database really raised, and PGlite also through the pipeline, as Postgres is
// in test/faults/bad-data.test.ts.

const t = useTestDatabase();
let pglite: Database;

beforeAll(async () => {
  pglite = await openDatabase({ dataDir: 'memory://' });
  await migrateDatabase(pglite);
});
afterAll(async () => {
  await pglite?.close();
});

/** [case, statement, the SQLSTATE raised, whether it is the list's failure]. */
const statements: Array<[string, string, string, boolean]> = [
  ['a number numeric cannot hold', "select '1e1000000'::numeric", '22003', true],
  ['a division by zero', 'select 1 / 0', '22012', true],
  ['text no jsonb takes', `select '"\\u0000"'::jsonb`, '22P05', true],
  ['a table that does not exist', 'select * from public.no_such_table', '42P01', false],
  ['a syntax error', 'selec 1', '42601', false],
];

async function raised(db: Database, sql: string): Promise<unknown> {
  try {
    await db.query(sql);
  } catch (err) {
    return err;
  }
  throw new Error(`expected '${sql}' to fail`);
}

describe.each([
  ['Postgres', () => t.db],
  ['PGlite', () => pglite],
])('SQLSTATE classification on %s', (_driver, db) => {
  it.each(statements)('%s', async (_name, sql, sqlstate, isListFailure) => {
    const err = await raised(db(), sql);
    expect((err as { code?: unknown }).code).toBe(sqlstate);
    const failure = listFailureOf(err, 'shipment_modes');
    if (!isListFailure) {
      expect(failure).toBeUndefined();
      return;
    }
    expect(failure).toBeInstanceOf(DataRefusedError);
    expect(failure).toMatchObject({ code: `sqlstate_${sqlstate}`, sqlstate });
    expect(failure!.message).toMatch(new RegExp(`^shipment_modes: Postgres refused the list's data: .+ \\(SQLSTATE ${sqlstate}\\)$`));
  });

  it("a unique violation is the list's", async () => {
    await db().query('create table if not exists public.sqlstate_unique (k int primary key)');
    await db().query('insert into public.sqlstate_unique values (1) on conflict do nothing');
    const err = await raised(db(), 'insert into public.sqlstate_unique values (1)');
    expect((err as { code?: unknown }).code).toBe('23505');
    expect(listFailureOf(err, 'shipment_modes')).toMatchObject({ code: 'sqlstate_23505' });
  });
});

describe('a list Postgres refuses, on PGlite', () => {
  let sb: Sandbox;
  let fx: ReturnType<typeof pipelineFixture>;
  beforeAll(async () => {
    sb = await useSandbox();
    fx = pipelineFixture(sb, { REFSYNC_LISTS: 'shipment_modes,equipment_types' });
  });
  afterAll(async () => {
    await fx?.client.close();
  });

  it('fails that list alone with its SQLSTATE, leaves its rows untouched, and the next run heals', async () => {
    const first = await fx.sync(pglite);
    expect(first.status).toBe('succeeded');
    const before = await count(pglite, 'current_entries', "list_key = 'shipment_modes'");
    sb.control.modifyEntry('shipment_modes', 'LTL', { description: 'changed while refused' });
    sb.control.setFaults({ badValue: { list: 'shipment_modes', json: '1e1000000' } });
    const refused = await fx.sync(pglite);
    expect(refused.status).toBe('partial');
    const outcome = refused.outcomes.find((o) => o.target.list.key === 'shipment_modes')!;
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(/^shipment_modes: Postgres refused the list's data: .* \(SQLSTATE 22003\)$/);
    const { rows } = await pglite.query<{ status: string; error_code: string }>(
      "select status, error_code from refdata.snapshots where list_key = 'shipment_modes' order by id desc limit 1",
    );
    expect(rows).toEqual([{ status: 'failed', error_code: 'sqlstate_22003' }]);
    expect(await count(pglite, 'current_entries', "list_key = 'shipment_modes' and description = 'changed while refused'")).toBe(0);
    expect(await count(pglite, 'current_entries', "list_key = 'shipment_modes'")).toBe(before);
    expect(refused.outcomes.find((o) => o.target.list.key === 'equipment_types')!.status).toBe('unchanged');

    sb.control.clearFaults();
    const healed = await fx.sync(pglite);
    expect(healed.status).toBe('succeeded');
    expect(await count(pglite, 'current_entries', "list_key = 'shipment_modes' and description = 'changed while refused'")).toBe(1);
  });
});

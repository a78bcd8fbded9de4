import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import { catalog } from '../../src/catalog/catalog.ts';
import { sqlType, type ColumnType } from '../../src/columns/typed-columns.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import { createUpstreamClient } from '../../src/upstream/index.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxSource } from '../helpers/source.ts';
import { V2024, V2025 } from '../reader/fixture.ts';

// The per-list views carry one typed column per field the list serves, and follow the data.
describe('typed columns of the per-list views', () => {
  const t = useTestDatabase();
  let sb: Sandbox;

  async function sync(lists?: ListKey[]) {
    const source = sandboxSource(sb, { REFSYNC_CHARGE_CODE_VERSIONS: `${V2024},${V2025}`, REFSYNC_ALERT_ON: 'schema_changed' });
    const client = createUpstreamClient(source);
    try {
      const options: Parameters<typeof runSync>[0] = { db: t.db, sources: [source], clientFor: () => client, trigger: 'cli' };
      if (lists) options.lists = lists;
      const [result] = await runSync(options);
      return result!;
    } finally {
      await client.close();
    }
  }

  const columnsOf = async (view: string) =>
    (
      await t.db.query<{ column_name: string; data_type: string }>(
        `select column_name, format_type(atttypid, atttypmod) as data_type
         from pg_attribute a join lateral (select a.attname as column_name) n on true
         where attrelid = $1::regclass and attnum > 0 and not attisdropped order by attnum`,
        [`refdata.${view}`],
      )
    ).rows;
  const typeOf = async (view: string, column: string) => (await columnsOf(view)).find((c) => c.column_name === column)?.data_type;

  /** Every typed column of a list's view holds, row by row, the value the sandbox serves. */
  async function expectServedValues(key: ListKey) {
    const { rows: recorded } = await t.db.query<{ field: string; column_name: string; data_type: ColumnType }>(
      'select field, column_name, data_type from refdata.list_columns where list_key = $1 and replaced_at is null',
      [key],
    );
    const variants =
      key === 'charge_codes'
        ? [{ version: V2024 }, { version: V2025 }]
        : key === 'carrier_package_types'
          ? ['fedex', 'ups', 'usps', 'dhl'].map((carrier) => ({ carrier }))
          : [{}];
    const variantColumn = key === 'charge_codes' ? 'version' : key === 'carrier_package_types' ? 'carrier' : 'variant';
    const list = catalog.find((l) => l.key === key)!;
    for (const selector of variants) {
      const served = sb.control.getEntries(key, selector) as Array<Record<string, unknown>>;
      const variant = Object.values(selector)[0] ?? '';
      const { rows } = await t.db.query<{ entry_key: string; row: Record<string, unknown> }>(
        `select entry_key, to_jsonb(v) as row from refdata.${key} v where ${variantColumn} = $1`,
        [variant],
      );
      expect(rows.length, `${key}:${variant}`).toBe(served.length);
      const byKey = new Map(rows.map((r) => [r.entry_key, r.row]));
      for (const entry of served) {
        const entryKey = list.keyFields.map((f) => String(entry[f] ?? '')).join('|');
        const row = byKey.get(entryKey);
        expect(row, `${key}:${variant}:${entryKey}`).toBeDefined();
        for (const c of recorded) {
          const value = entry[c.field] ?? null;
          const read = row![c.column_name];
          const what = `${key}.${c.column_name} of ${entryKey}`;
          if (c.data_type === 'timestamptz' && value !== null) {
            expect(new Date(read as string).getTime(), what).toBe(new Date(value as string).getTime());
            continue;
          }
          const expected = value === null ? null : c.data_type === 'text' && typeof value !== 'string' ? JSON.stringify(value) : value;
          expect(read, what).toEqual(expected);
        }
      }
    }
  }

  const clients: pg.Client[] = [];
  async function connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    clients.push(client);
    return client;
  }
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
  });

  async function until(what: string, check: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 500; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  /**
   * Runs `change` (a sync) while a reader in another session queries `view` at the worst moment:
   * a first session holds the view, so the sync's DDL queues for it, and the reader's query queues
   * behind the DDL. Then the first session lets go. Returns the reader's rows (or its error).
   */
  async function readWhileViewChanges<T>(view: string, readerSql: string, change: () => Promise<T>) {
    const holder = await connect();
    const reader = await connect();
    await reader.query('set role refdata_reader');
    await holder.query('begin');
    await holder.query(`select count(*) from refdata.${view}`);
    const changing = change();
    const waitingOn = async (granted: boolean, pid?: number) =>
      (
        await t.db.query(
          `select 1 from pg_locks where relation = $1::regclass and not granted ${pid ? 'and pid = $2' : ''} and ${granted ? 'true' : 'true'}`,
          pid ? [`refdata.${view}`, pid] : [`refdata.${view}`],
        )
      ).rows.length > 0;
    await until('the sync to wait for the view', () => waitingOn(false));
    const readerPid = (await reader.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    const reading = reader.query(readerSql).then(
      (r) => r.rows,
      (err: Error) => err,
    );
    await until('the reader to queue behind the sync', () => waitingOn(false, readerPid));
    await holder.query('commit');
    const result = await changing;
    return { result, read: await reading };
  }

  beforeAll(async () => {
    sb = await useSandbox();
    const run = await sync();
    expect(run.status).toBe('succeeded');
  });

  it('after a first sync every list view has a typed column per served field, holding the served values', async () => {
    const accessorials = await columnsOf('accessorials');
    expect(accessorials.slice(0, 7).map((c) => c.column_name)).toEqual(['environment', 'variant', 'entry_key', 'code', 'description', 'payload', 'valid_from']);
    expect(accessorials).toEqual(
      expect.arrayContaining([
        { column_name: 'is_charge_code', data_type: 'boolean' },
        { column_name: 'long_description', data_type: 'text' },
        { column_name: 'id', data_type: 'bigint' },
        { column_name: 'stop_type', data_type: 'text' },
        // Fields named like a contract column keep their own column.
        { column_name: 'code_field', data_type: 'text' },
        { column_name: 'description_field', data_type: 'text' },
      ]),
    );
    expect(await typeOf('charge_codes', 'is_active')).toBe('boolean');
    expect(await typeOf('charge_codes', 'category')).toBe('text');
    expect((await columnsOf('charge_codes'))[1]!.column_name).toBe('version');
    expect(await typeOf('carrier_package_types', 'carrier_field')).toBe('text');
    expect(await typeOf('appointment_types', 'applies_to')).toBe('jsonb');
    expect(await typeOf('equipment_types', 'length_ft')).toBe('bigint');
    for (const { key } of catalog) {
      const served = new Set((sb.control.getEntries(key) as object[]).flatMap((e) => Object.keys(e)));
      const { rows } = await t.db.query<{ field: string; column_name: string; data_type: ColumnType }>(
        'select field, column_name, data_type from refdata.list_columns where list_key = $1 and replaced_at is null',
        [key],
      );
      for (const field of served)
        expect(
          rows.map((r) => r.field),
          `${key}.${field}`,
        ).toContain(field);
      for (const r of rows)
        expect(await typeOf(key, r.column_name), `${key}.${r.column_name}`).toBe(sqlType(r.data_type).replace('timestamptz', 'timestamp with time zone'));
      await expectServedValues(key);
    }
  });

  /** The view's own comment and each column's, by column name ('' for the view). */
  const commentsOf = async (view: string) =>
    Object.fromEntries(
      (
        await t.db.query<{ name: string; comment: string | null }>(
          `select '' as name, obj_description($1::regclass, 'pg_class') as comment
           union all
           select attname, col_description(attrelid, attnum) from pg_attribute where attrelid = $1::regclass and attnum > 0 and not attisdropped`,
          [`refdata.${view}`],
        )
      ).rows.map((r) => [r.name, r.comment]),
    );

  it('a field the service adds becomes a column at the next sync: filled, recorded, described, alerted, readable by the reader role, also mid-sync', async () => {
    const commentsBefore = await commentsOf('accessorials');
    sb.control.addField('accessorials', 'is_hazardous', true);
    const { result: run, read } = await readWhileViewChanges('accessorials', 'select entry_key, is_hazardous from refdata.accessorials', () =>
      sync(['accessorials']),
    );
    expect(run.status).toBe('succeeded');
    expect(read).not.toBeInstanceOf(Error);
    expect((read as Array<{ is_hazardous: boolean }>).map((r) => r.is_hazardous)).toEqual(Array(42).fill(true));
    expect(await typeOf('accessorials', 'is_hazardous')).toBe('boolean');
    expect(await typeOf('accessorials_history', 'is_hazardous')).toBe('boolean');
    // The view was replaced, not re-created: what described it stays, and the new column is described.
    const { is_hazardous: described, ...kept } = await commentsOf('accessorials');
    expect(kept).toEqual(commentsBefore);
    expect(described).toMatch(/^Field "is_hazardous" as served, typed boolean \(inferred from its values\); since /);
    await expectServedValues('accessorials');
    const snapshotId = run.outcomes[0]!.snapshotId;
    const { rows: recorded } = await t.db.query(
      'select column_name, data_type, first_snapshot_id, last_snapshot_id from refdata.list_columns where list_key = $1 and field = $2',
      ['accessorials', 'is_hazardous'],
    );
    expect(recorded).toEqual([{ column_name: 'is_hazardous', data_type: 'boolean', first_snapshot_id: snapshotId, last_snapshot_id: snapshotId }]);
    const { rows: alerts } = await t.db.query<{ kind: string; payload: Record<string, unknown> }>(
      'select kind, payload from refdata.alerts where snapshot_id = $1',
      [snapshotId],
    );
    expect(alerts).toEqual([
      expect.objectContaining({
        kind: 'schema_changed',
        payload: expect.objectContaining({
          fields_added: ['is_hazardous:boolean'],
          columns: [{ field: 'is_hazardous', column: 'is_hazardous', change: 'added', to: 'boolean' }],
        }),
      }),
    ]);
  });

  it('a field whose values turn from numbers to strings widens its column, keeps every value and every grant, also mid-sync', async () => {
    await t.db.query(
      `do $$ begin if not exists (select 1 from pg_roles where rolname = 'refsync_t17_bi') then create role refsync_t17_bi nologin; end if; end $$`,
    );
    await t.db.query('grant select on refdata.accessorials to refsync_t17_bi');
    try {
      const before = await t.db.query<{ entry_key: string; id: string }>('select entry_key, id from refdata.accessorials order by entry_key');
      sb.control.retypeField('accessorials', 'id');
      const { result: run, read } = await readWhileViewChanges('accessorials', 'select entry_key, id from refdata.accessorials order by entry_key', () =>
        sync(['accessorials']),
      );
      expect(run.status).toBe('succeeded');
      expect(read).not.toBeInstanceOf(Error);
      // The reader saw the re-created view: the ids as text, the same values.
      expect(read).toEqual(before.rows.map((r) => ({ entry_key: r.entry_key, id: String(r.id) })));
      expect(await typeOf('accessorials', 'id')).toBe('text');
      expect(await typeOf('accessorials_history', 'id')).toBe('text');
      await expectServedValues('accessorials');
      // The closed versions (ids served as numbers) read as text through the history view.
      const { rows: old } = await t.db.query<{ id: string }>('select id from refdata.accessorials_history where valid_to is not null order by entry_key');
      expect(old.length).toBeGreaterThan(0);
      for (const r of old) expect(typeof r.id).toBe('string');
      const { rows: grants } = await t.db.query(
        `select grantee, privilege_type from information_schema.role_table_grants where table_schema = 'refdata' and table_name = 'accessorials' and grantee <> current_user order by grantee`,
      );
      expect(grants).toEqual([
        { grantee: 'refdata_reader', privilege_type: 'SELECT' },
        { grantee: 'refsync_t17_bi', privilege_type: 'SELECT' },
      ]);
      const { rows: history } = await t.db.query(
        'select data_type, replaced_at is null as current from refdata.list_columns where list_key = $1 and field = $2 order by id',
        ['accessorials', 'id'],
      );
      expect(history).toEqual([
        { data_type: 'bigint', current: false },
        { data_type: 'text', current: true },
      ]);
      const { rows: alerts } = await t.db.query<{ payload: { columns: unknown } }>(
        "select payload from refdata.alerts where snapshot_id = $1 and kind = 'schema_changed'",
        [run.outcomes[0]!.snapshotId],
      );
      expect(alerts[0]!.payload.columns).toEqual([{ field: 'id', column: 'id', change: 'widened', from: 'bigint', to: 'text' }]);
    } finally {
      await t.db.query('revoke all on refdata.accessorials from refsync_t17_bi');
      await t.db.query('drop role refsync_t17_bi');
    }
  });

  it('an unchanged sync, and a changed one with the same columns, take no DDL and no lock on the views', async () => {
    const definition = () =>
      t.db.query(
        `select c.oid::int, c.xmin::text as class_xmin, r.xmin::text as rule_xmin from pg_class c join pg_rewrite r on r.ev_class = c.oid where c.oid = any($1::regclass[]) order by c.oid`,
        [catalog.flatMap((l) => [`refdata.${l.key}`, `refdata.${l.key}_history`])],
      );
    const before = (await definition()).rows;
    const holder = await connect();
    await holder.query('begin');
    // LOCK TABLE on a view locks the tables under it too, so the unchanged sync, which writes no
    // entries, runs while the views and their tables are locked; any lock it took would wait.
    for (const l of catalog) await holder.query(`lock table refdata.${l.key}, refdata.${l.key}_history in access exclusive mode`);
    try {
      const unchanged = await sync();
      expect(unchanged.outcomes.map((o) => o.status)).toEqual(unchanged.outcomes.map(() => 'unchanged'));
    } finally {
      await holder.query('rollback');
    }
    // A changed sync writes entries; a reader holding every view (ACCESS SHARE) would block any DDL.
    await holder.query('begin');
    for (const l of catalog) await holder.query(`select from refdata.${l.key}, refdata.${l.key}_history limit 0`);
    try {
      sb.control.modifyEntry('hazmat', '1.1', { description: 'Explosives (mass explosion hazard)' });
      const changed = await sync(['hazmat']);
      expect(changed.outcomes.map((o) => o.status)).toEqual(['changed']);
    } finally {
      await holder.query('rollback');
    }
    expect((await definition()).rows).toEqual(before);
  });

  it('every inferred type reads back through the view exactly as served', async () => {
    const added = [
      {
        code: 'A',
        description: 'a',
        flag: true,
        n: 9007199254740991,
        x: 1.5,
        d: '2000-02-29',
        ts: '2024-06-11T10:00:00+05:30',
        local: '2024-06-11T10:00:00',
        o: { a: 1 },
        mixed: 1,
        bools: true,
        nothing: null,
        'Odd Name': 'x',
      },
      {
        code: 'B',
        description: 'b',
        flag: false,
        n: -5,
        x: 2,
        d: '2024-06-11',
        ts: '2024-06-11T10:00:00.123456Z',
        local: 'later',
        o: [1, 'two'],
        mixed: 'one',
        bools: 'yes',
        nothing: null,
        'Odd Name': 'y',
      },
    ];
    for (const entry of added) sb.control.addEntry('piece_types', entry);
    expect((await sync(['piece_types'])).outcomes[0]!.status).toBe('changed');
    const types = Object.fromEntries((await columnsOf('piece_types')).map((c) => [c.column_name, c.data_type]));
    expect(types).toMatchObject({
      flag: 'boolean',
      n: 'bigint',
      x: 'numeric',
      d: 'date',
      ts: 'timestamp with time zone',
      local: 'text',
      o: 'jsonb',
      mixed: 'text',
      bools: 'jsonb',
      nothing: 'text',
      odd_name: 'text',
    });
    await expectServedValues('piece_types');
  });

  it('Postgres casts every string the inference calls a date or a timestamptz', async () => {
    const { valueType } = await import('../../src/columns/typed-columns.ts');
    const samples = [
      '2000-02-29',
      '0001-01-01',
      '9999-12-31',
      '2024-06-11T10:00Z',
      '2024-06-11T10:00+0530',
      '2024-06-11 23:59:59.999999999-15:59',
      '2024-06-11T00:00:00+14',
    ];
    for (const s of samples) {
      const type = valueType(s);
      expect(['date', 'timestamptz'], s).toContain(type);
      const { rows } = await t.db.query<{ ok: boolean }>(`select $1::${type} is not null as ok`, [s]);
      expect(rows[0]!.ok, s).toBe(true);
    }
  });
});

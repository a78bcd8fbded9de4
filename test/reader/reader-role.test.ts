import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalog } from '../../src/catalog/catalog.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { syncSandbox, V2024, V2025 } from './fixture.ts';

// A login granted refdata_reader, as a data team would get one. Roles are cluster-wide: the name is
// unique per run and the role is dropped at the end.
describe('the refdata_reader role', () => {
  const t = useTestDatabase();
  const login = `refsync_analyst_${randomBytes(4).toString('hex')}`;
  let analyst: pg.Client;

  beforeAll(async () => {
    const sb = await useSandbox();
    await syncSandbox(t.db, sb);
    await t.db.query(`create role ${login} login in role refdata_reader`);
    const url = new URL(t.url);
    url.username = login;
    analyst = new pg.Client({ connectionString: url.toString() });
    await analyst.connect();
  });

  afterAll(async () => {
    await analyst?.end().catch(() => undefined);
    // Owned privileges would block DROP ROLE in this database; there are none, but be explicit.
    await t.db.query(`drop owned by ${login}`).catch(() => undefined);
    await t.db.query(`drop role if exists ${login}`);
  });

  const attempt = async (sql: string, params: unknown[] = []) => {
    try {
      await analyst.query(sql, params);
      return 'allowed';
    } catch (err) {
      return (err as pg.DatabaseError).code ?? (err as Error).message;
    }
  };

  it('reads every view and calls every function', async () => {
    const { rows: views } = await t.db.query<{ table_name: string }>(
      "select table_name from information_schema.views where table_schema = 'refdata' order by 1",
    );
    // current_entries, list_sync_times, and per list its view and its typed history view.
    expect(views.length).toBe(2 * catalog.length + 2);
    for (const { table_name } of views) {
      const { rows } = await analyst.query(`select count(*)::int as n from refdata.${table_name}`);
      expect(rows[0].n, table_name).toBeGreaterThan(0);
    }
    for (const table of ['entries', 'entry_changes', 'snapshots', 'sync_runs', 'alerts']) {
      await analyst.query(`select * from refdata.${table} limit 1`);
    }
    const { rows: asOf } = await analyst.query("select count(*)::int as n from refdata.entries_as_of('charge_codes', now())");
    expect(asOf[0].n).toBeGreaterThan(40);
    const { rows: cc } = await analyst.query('select count(*)::int as n from refdata.charge_codes_as_of(now(), $1)', [V2025]);
    expect(cc[0].n).toBeGreaterThan(40);
    const { rows: diff } = await analyst.query('select count(*)::int as n from refdata.charge_code_version_diff($1, $2)', [V2024, V2025]);
    expect(diff[0].n).toBeGreaterThan(0);
    const { rows: listDiff } = await analyst.query("select count(*)::int as n from refdata.entries_diff('hazmat', '-infinity', now())");
    expect(listDiff[0].n).toBeGreaterThan(0);
  });

  it('cannot write, create or grant anything', async () => {
    const denied = '42501';
    expect(
      await attempt(
        "insert into refdata.entries (environment, list_key, entry_key, payload, entry_hash, valid_from, first_snapshot_id) values ('x', 'hazmat', 'k', '{}', 'h', now(), 1)",
      ),
    ).toBe(denied);
    expect(await attempt("update refdata.entries set description = 'x'")).toBe(denied);
    expect(await attempt('delete from refdata.entry_changes')).toBe(denied);
    expect(await attempt('truncate refdata.alerts')).toBe(denied);
    expect(await attempt("update refdata.charge_codes set description = 'x'")).toBe(denied);
    expect(await attempt("delete from refdata.current_entries where list_key = 'hazmat'")).toBe(denied);
    expect(await attempt("select nextval('refdata.entries_id_seq')")).toBe(denied);
    expect(await attempt('create table refdata.mine (id int)')).toBe(denied);
    expect(await attempt('create view refdata.mine as select 1')).toBe(denied);
    expect(await attempt('create function refdata.mine() returns int language sql as $$ select 1 $$')).toBe(denied);
    expect(await attempt('create table public.mine (id int)')).toBe(denied);
    expect(await attempt('create schema mine')).toBe(denied);
    // GRANT without the grant option only warns ("no privileges were granted"): check the effect.
    await attempt('grant select on refdata.entries to public');
    const { rows } = await t.db.query("select has_table_privilege('public', 'refdata.entries', 'select') as granted");
    expect(rows[0]).toEqual({ granted: false });
    expect(await attempt('drop view refdata.charge_codes')).toBe(denied);
    expect(await attempt('alter table refdata.entries add column x int')).toBe(denied);
    expect(await attempt('comment on view refdata.charge_codes is $$x$$')).toBe(denied);
  });

  it('has nothing but SELECT on the tables and EXECUTE on the query functions', async () => {
    const { rows } = await t.db.query<{ privilege_type: string; n: number }>(
      `select privilege_type, count(*)::int as n from information_schema.role_table_grants
       where grantee = 'refdata_reader' and table_schema = 'refdata' group by 1`,
    );
    expect(rows).toEqual([{ privilege_type: 'SELECT', n: expect.any(Number) }]);
    const { rows: fns } = await t.db.query<{ proname: string; reader: boolean; public: boolean }>(
      `select p.proname,
              has_function_privilege('refdata_reader', p.oid, 'execute') as reader,
              exists (select 1 from aclexplode(p.proacl) a where a.grantee = 0 and a.privilege_type = 'EXECUTE') as public
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace and n.nspname = 'refdata' order by 1`,
    );
    // The readers of the typed columns stay executable by PUBLIC: any role granted a view needs them.
    const reads = ['as_bigint', 'as_boolean', 'as_date', 'as_numeric', 'as_text', 'as_timestamptz'].map((proname) => ({ proname, reader: true, public: true }));
    // The typed as-of and diff functions of every list (charge_codes_as_of among them): the reader's only.
    const perList = new Set(catalog.flatMap((c) => [`${c.key}_as_of`, `${c.key}_diff`]));
    expect(fns.filter((f) => perList.has(f.proname))).toEqual([...perList].sort().map((proname) => ({ proname, reader: true, public: false })));
    expect(fns.filter((f) => !perList.has(f.proname))).toEqual([
      // refsync's own count of a run's progress (migration 0011): not for readers.
      { proname: 'advance_run', reader: false, public: false },
      ...reads,
      { proname: 'change_feed', reader: true, public: false },
      { proname: 'change_feed_after', reader: true, public: false },
      { proname: 'change_feed_check', reader: true, public: false },
      { proname: 'change_feed_current_epoch', reader: true, public: false },
      { proname: 'change_feed_end', reader: true, public: false },
      { proname: 'change_feed_epoch_of', reader: true, public: false },
      // refsync's own: records a restore as a new feed epoch (migration 0019), by DDL.
      { proname: 'change_feed_follow_restore', reader: false, public: false },
      { proname: 'change_feed_held', reader: true, public: false },
      { proname: 'change_feed_id_of', reader: true, public: false },
      { proname: 'change_feed_position', reader: true, public: false },
      { proname: 'change_feed_position', reader: true, public: false },
      { proname: 'change_feed_timeline', reader: true, public: false },
      { proname: 'change_feed_txid_of', reader: true, public: false },
      { proname: 'changed_fields', reader: true, public: false },
      { proname: 'charge_code_version_diff', reader: true, public: false },
      { proname: 'code_usage', reader: true, public: false },
      { proname: 'entries_as_of', reader: true, public: false },
      { proname: 'entries_diff', reader: true, public: false },
      { proname: 'is_valid_day', reader: true, public: true },
      // refsync's own reads and locks of a sync (migration 0010): not for readers.
      { proname: 'lock_target_state', reader: false, public: false },
      // The previous release's calls, kept for a rolling upgrade (migration 0020): not for readers.
      // The terms of the views' nonconforming column (migration 0017): executable as the readers are.
      ...['bigint', 'boolean', 'date', 'numeric', 'text', 'timestamptz'].map((type) => ({ proname: `nonconforming_${type}`, reader: true, public: true })),
      { proname: 'orphans', reader: true, public: false },
      // refsync's one-statement record of unchanged fetches (migration 0020): not for readers.
      { proname: 'record_unchanged_lists', reader: false, public: false },
      { proname: 'run_progress', reader: false, public: false },
      { proname: 'target_lock_key', reader: false, public: false },
      { proname: 'target_state', reader: false, public: false },
      // The trigger that keeps refdata.target_last_ok: not a query function.
      { proname: 'track_last_ok', reader: false, public: false },
      { proname: 'usage_name', reader: true, public: false },
      // The one writer of snapshot rows (migration 0020): not for readers.
      { proname: 'write_snapshots', reader: false, public: false },
    ]);
    const { rows: schema } = await t.db.query<{ usage: boolean; create: boolean }>(
      "select has_schema_privilege('refdata_reader', 'refdata', 'usage') as usage, has_schema_privilege('refdata_reader', 'refdata', 'create') as create",
    );
    expect(schema).toEqual([{ usage: true, create: false }]);
  });

  it('sees tables created later (default privileges)', async () => {
    await t.db.query('create table refdata.later_table (id int)');
    try {
      await t.db.query("comment on table refdata.later_table is 'test'");
      expect(await attempt('select * from refdata.later_table')).toBe('allowed');
      expect(await attempt('insert into refdata.later_table values (1)')).toBe('42501');
    } finally {
      await t.db.query('drop table refdata.later_table');
    }
  });

  it('every view column and every function carries a comment', async () => {
    const { rows } = await t.db.query<{ what: string }>(`
      select c.relname || coalesce('.' || a.attname, '') as what
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'refdata'
      left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where c.relkind = 'v'
        and (obj_description(c.oid, 'pg_class') is null
             or (a.attname is not null and col_description(c.oid, a.attnum) is null))
      union all
      select p.proname || '()' from pg_proc p join pg_namespace n on n.oid = p.pronamespace and n.nspname = 'refdata'
      where coalesce(obj_description(p.oid, 'pg_proc'), '') = ''`);
    expect(rows).toEqual([]);
  });
});

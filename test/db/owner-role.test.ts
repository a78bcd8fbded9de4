// A managed Postgres's owner role: it owns its database but may not create roles. It
// migrates and syncs without refdata_reader, and the first migrate after an administrator created
// the role grants it what an ordinary migrate would have.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Queryable } from '../../src/db/database.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { canStartPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../faults/servers.ts';
import { runCli } from '../queue/helpers.ts';

if (!canStartPrivatePostgres)
  console.warn('[tests] skipping test/db/owner-role.test.ts: needs root and /usr/lib/postgresql/15/bin to start a private Postgres');

/** What refdata_reader may do in schema refdata: every table and function privilege it holds. */
async function readerPrivileges(q: Queryable): Promise<unknown> {
  const { rows } = await q.query(
    `select 'schema' as kind, 'refdata' as name,
            has_schema_privilege('refdata_reader', 'refdata', 'usage') as usage, has_schema_privilege('refdata_reader', 'refdata', 'create') as create
     union all
     select 'relation', c.relname, has_table_privilege('refdata_reader', c.oid, 'select'), has_table_privilege('refdata_reader', c.oid, 'insert')
     from pg_class c join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'refdata' where c.relkind in ('r', 'v', 'p')
     union all
     select 'function', p.oid::regprocedure::text, has_function_privilege('refdata_reader', p.oid, 'execute'), false
     from pg_proc p join pg_namespace n on n.oid = p.pronamespace and n.nspname = 'refdata'
     order by 1, 2`,
  );
  return rows;
}

describe.skipIf(!canStartPrivatePostgres)('refsync migrate as an owner that may not create roles', () => {
  const t = useTestDatabase();
  let server: PrivatePostgres;
  let sb: Sandbox;
  let admin: pg.Client;
  let ownerUrl: string;

  beforeAll(async () => {
    sb = await useSandbox();
    server = await startPrivatePostgres({ migrate: false });
    admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query('create role refsync_owner login nosuperuser nocreaterole');
    await admin.query('alter database refsync owner to refsync_owner');
    const url = new URL(server.url);
    url.username = 'refsync_owner';
    ownerUrl = url.toString();
  });
  afterAll(async () => {
    await admin?.end();
  });

  it('migrates and syncs without refdata_reader, then grants it on the first migrate after it exists', async () => {
    const env = sandboxEnv(sb, { DATABASE_URL: ownerUrl, REFSYNC_LISTS: 'shipment_modes,equipment_types' });
    const first = await runCli(['migrate'], env, 120_000);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const skipped = first.stdout.split('\n').filter((line) => line.includes('create role refdata_reader nologin'));
    expect(skipped).toHaveLength(1);
    expect((await admin.query("select count(*)::int as n from pg_roles where rolname = 'refdata_reader'")).rows[0].n).toBe(0);

    // The lists' generated views and functions are created without their grants.
    const sync = await runCli(['sync'], env, 120_000);
    expect(sync.stderr).toBe('');
    expect(sync.code).toBe(0);
    expect((await admin.query('select count(*)::int as n from refdata.shipment_modes')).rows[0].n).toBeGreaterThan(0);

    await admin.query('create role refdata_reader nologin');
    const granted = await runCli(['migrate'], env, 120_000);
    expect(granted.code).toBe(0);
    expect(granted.stdout).not.toMatch(/create role/);
    // What an ordinary migrate (by a role that created refdata_reader) grants, no more, no less.
    const owned = await openDatabase({ url: ownerUrl, poolSize: 1 });
    try {
      expect(await readerPrivileges(owned)).toEqual(await readerPrivileges(t.db));
    } finally {
      await owned.close();
    }
    expect((await runCli(['migrate'], env, 120_000)).code).toBe(0);
  });
});

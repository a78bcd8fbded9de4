// Every SQL block of the data teams' pages (docs/data-teams.md, the tutorial; docs/querying.md and
// docs/impact.md, the reference; docs/operating.md's) runs against a synced database, so the guide cannot rot:
// a renamed column, function or argument fails here. Each block runs in a transaction rolled back
// afterwards (roles and grants included), with the fact tables its examples name.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { feedCaughtUp } from '../feed/feed-reader.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { syncSandbox, V2024 } from '../reader/fixture.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const guide = ['data-teams', 'querying', 'impact', 'operating'].map((page) => readFileSync(`${root}docs/${page}.md`, 'utf8')).join('\n');
const blocks = [...guide.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** The relation an incremental model's `{{ this }}` names in these tests. */
const THIS = 'public.stg_refdata_changes';

/**
 * The Jinja the guide's dbt models use, as dbt renders it: source(), config() (nothing in the SQL),
 * `{{ this }}`, and is_incremental()'s branches (the first run of a model is not incremental).
 */
const rendered = (sql: string, incremental = false) =>
  sql
    .replace(/\{\{\s*source\('refdata',\s*'(\w+)'\)\s*\}\}/g, 'refdata.$1')
    .replace(/\{\{\s*config\([^}]*\)\s*\}\}/g, '')
    .replace(/\{\{\s*this\s*\}\}/g, THIS)
    .replace(/\{%\s*if is_incremental\(\)\s*%\}([\s\S]*?)\{%\s*else\s*%\}([\s\S]*?)\{%\s*endif\s*%\}/g, (_m, yes: string, no: string) =>
      incremental ? yes : no,
    );

/** The user's own tables and roles the examples use: fact tables with codes of the synced lists. */
const facts = `
  create table public.shipment_charges (shipment_id int, charge_code text, charged_at timestamptz);
  insert into public.shipment_charges select i, (array['SOC', 'DET', 'NOPE'])[1 + i % 3], now() from generate_series(1, 30) i;
  create table public.shipment_lines (shipment_id int, nmfc_item text, nmfc_sub text);
  insert into public.shipment_lines values (1, '156600', '3'), (2, '18810', null);
  create table public.shipments (charge_code text, shipped_at timestamptz, customer text);
  insert into public.shipments values ('SOC', now(), 'acme'), ('GONE', now(), 'acme');
`;

describe('docs/data-teams.md, querying.md and impact.md: every SQL block runs', () => {
  const t = useTestDatabase();

  beforeAll(async () => {
    const sb = await useSandbox();
    await syncSandbox(t.db, sb, undefined, 'production');
    sb.control.addEntry('charge_codes', { code: 'ZDOC', description: 'Docs test', category: 'other' }, { version: V2024 });
    sb.control.modifyEntry('accessorials', 'LGDEL', { description: 'Liftgate at delivery' });
    await syncSandbox(t.db, sb, ['charge_codes', 'accessorials'], 'production');
    await t.db.query(facts);
  });

  it('the guide has the everyday tasks as SQL', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(14);
    for (const task of [
      'refdata.charge_codes',
      '_as_of(',
      'entries_diff(',
      'entry_changes',
      'charge_code_version_diff(',
      'list_sync_times',
      'orphans(',
      'listen refdata_changes',
      "source('refdata'",
      'nmfc_codes',
      'refdata.change_feed(',
      'is_incremental()',
    ]) {
      expect(
        blocks.some((b) => b.includes(task)),
        task,
      ).toBe(true);
    }
  });

  it.each(
    blocks.map((sql, i) => [
      i,
      sql
        .split('\n')
        .find((l) => l.trim() && !l.startsWith('--'))!
        .slice(0, 60),
      sql,
    ]),
  )('block %i runs (%s)', async (_i, _first, sql) => {
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    try {
      await client.query('begin');
      // Roles a block grants to or creates its members in: rolled back with the block.
      await client.query(`do $$ begin
          if not exists (select 1 from pg_roles where rolname = 'etl_loader') then create role etl_loader; end if;
          if not exists (select 1 from pg_roles where rolname = 'refsync') then create role refsync; end if;
        end $$`);
      await client.query(rendered(sql));
    } finally {
      await client.query('rollback').catch(() => undefined);
      await client.end();
    }
  });

  it('the examples return what they say on the synced data', async () => {
    const one = async (needle: string) => {
      const sql = rendered(blocks.find((b) => b.includes(needle))!);
      const statement = sql.split(';').find((s) => s.includes(needle))!;
      return (await t.db.query(statement)).rows;
    };
    expect((await one('is_active\norder by category')).length).toBeGreaterThan(10);
    const asOf = await one("charge_codes_as_of(s.charged_at, '2024-06-11', 'production')");
    expect(asOf.filter((r) => r.description !== null).length).toBeGreaterThan(0);
    expect((await one('n.item = f.nmfc_item')).length).toBe(2);
    const added = await one("c.change = 'added'");
    expect(added.map((r) => r.code)).toContain('ZDOC');
    expect((await one('charge_code_version_diff(')).length).toBeGreaterThan(5);
  });

  it('the incremental dbt model over the change feed keeps every change once, first run and later runs', async () => {
    const model = blocks.find((b) => b.includes('is_incremental()'))!;
    const count = async (sql: string) => (await t.db.query<{ n: number }>(sql)).rows[0]!.n;
    // dbt's first run creates the table from the model; each later run inserts what the model selects.
    await feedCaughtUp(t.db);
    await t.db.query(`create table ${THIS} as ${rendered(model)}`);
    const all = 'select count(*)::int as n from refdata.entry_changes';
    expect(await count(`select count(*)::int as n from ${THIS}`)).toBe(await count(all));
    const sb = await useSandbox();
    await syncSandbox(t.db, sb, ['accessorials'], 'feed-docs');
    sb.control.removeEntry('accessorials', 'LGDEL');
    sb.control.modifyEntry('accessorials', 'INDEL', { description: 'Inside delivery, ground floor' });
    await syncSandbox(t.db, sb, ['accessorials'], 'feed-docs');
    const kept = `select count(*)::int as n from ${THIS}`;
    const before = await count(kept);
    await feedCaughtUp(t.db);
    await t.db.query(`insert into ${THIS} ${rendered(model, true)}`);
    expect(await count(kept)).toBe(before + 2);
    await t.db.query(`insert into ${THIS} ${rendered(model, true)}`);
    expect(await count(kept)).toBe(before + 2);
    expect(await count(`select count(distinct position)::int as n from ${THIS}`)).toBe(await count(all));
    await t.db.query(`drop table ${THIS}`);
  });

  it("the guide's \\d refdata.accessorials is the view's columns and types", async () => {
    const shown = guide.slice(guide.indexOf('=> \\d refdata.accessorials'));
    const table = shown.slice(0, shown.indexOf('```'));
    const documented = [...table.matchAll(/^ (\w+) +\| (.+?)\s*$/gm)].map((m) => `${m[1]} ${m[2]}`).filter((c) => c !== 'Column Type');
    const { rows } = await t.db.query<{ c: string }>(
      `select a.attname || ' ' || format_type(a.atttypid, a.atttypmod) as c from pg_attribute a
        where a.attrelid = 'refdata.accessorials'::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum`,
    );
    expect(documented).toContain('nonconforming jsonb');
    expect(documented).toEqual(rows.map((r) => r.c));
  });
});

// No dead SQL: every function of schema refdata in a migrated database is called by something. A
// function that neither the code in src/ calls (comments aside), nor the contract lists as public (docs/contract.md), nor a
// trigger, view or default of the database uses, nor a function in use calls in its body, is one
// a migration should have dropped: once code stops calling it, it drifts from the code that replaced it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listKeys } from '../../src/catalog/list-keys.ts';
import { listFunctionNames } from '../../src/columns/list-functions-sql.ts';
import type { Queryable } from '../../src/db/database.ts';
import { useTestDatabase } from '../helpers/db.ts';

const t = useTestDatabase();
const root = new URL('../../', import.meta.url).pathname;

/** The code under src/, without its comment lines: a comment that names a function does not call it. */
function sourceCode(): string {
  return readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|js|sql)$/.test(e.name))
    .flatMap((e) => readFileSync(join(e.parentPath, e.name), 'utf8').split('\n'))
    .filter((line) => !/^\s*(\/\/|\/\*|\*|--)/.test(line))
    .join('\n');
}

/** The functions docs/contract.md lists as public (its "SQL functions" section). */
function contractPublicFunctions(): Set<string> {
  const contract = readFileSync(join(root, 'docs/contract.md'), 'utf8');
  const line = contract.split('\n').find((l) => l.startsWith('- Public: '));
  if (!line) throw new Error('docs/contract.md: no "- Public: " line of SQL functions');
  return new Set([...line.matchAll(/`refdata\.([a-z0-9_]+)`/g)].map((m) => m[1]!));
}

/**
 * Whether src/ names the function: as `refdata.<name>`, or by a prefix a template completes
 * (`refdata.as_${type}` names every refdata.as_<type>).
 */
function namedBySource(source: string): (name: string) => boolean {
  const names = new Set<string>();
  const prefixes: string[] = [];
  for (const m of source.matchAll(/refdata\.([a-z0-9_]*)(\$\{)?/g)) {
    if (m[2]) {
      if (m[1]) prefixes.push(m[1]);
    } else names.add(m[1]!);
  }
  return (name) => names.has(name) || prefixes.some((p) => name.startsWith(p));
}

/**
 * Functions this release no longer calls but keeps for the previous release's workers during a
 * rolling upgrade (docs/production.md#upgrading: expand, then contract). The next release's
 * migration drops them and empties this list.
 */
const retiring = new Set(['record_unchanged', 'lock_target_state_or_record_unchanged']);

interface FunctionRow {
  name: string;
  signature: string;
  body: string;
  /** A trigger, view, default or constraint of the database depends on it. */
  used_by_database: boolean;
}

/** The refdata functions in `q`'s database that nothing calls, by signature. */
async function uncalledFunctions(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<FunctionRow>(
    `select p.proname as name, p.oid::regprocedure::text as signature, p.prosrc as body,
            exists (select 1 from pg_depend d where d.refclassid = 'pg_proc'::regclass and d.refobjid = p.oid
                      and d.classid <> 'pg_proc'::regclass and d.deptype = 'n') as used_by_database
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'refdata'`,
  );
  const named = namedBySource(sourceCode());
  const publicNames = contractPublicFunctions();
  const perList = new Set(listKeys.flatMap((key) => listFunctionNames(key)));
  const live = new Set(
    rows.filter((f) => retiring.has(f.name) || f.used_by_database || named(f.name) || publicNames.has(f.name) || perList.has(f.name)).map((f) => f.name),
  );
  // A function a live function calls is live: closed over the bodies until nothing is added.
  for (let grew = true; grew; ) {
    grew = false;
    const bodies = rows.filter((f) => live.has(f.name)).map((f) => f.body);
    for (const f of rows) {
      if (!live.has(f.name) && bodies.some((body) => new RegExp(`\\brefdata\\.${f.name}\\s*\\(`).test(body))) {
        live.add(f.name);
        grew = true;
      }
    }
  }
  return rows
    .filter((f) => !live.has(f.name))
    .map((f) => f.signature)
    .sort();
}

describe('functions of schema refdata', () => {
  it('are each called by src/, listed public in the contract, or used by the database or a function in use', async () => {
    expect(await uncalledFunctions(t.db)).toEqual([]);
  });

  it('keeps the retiring functions only while nothing in src/ calls them', async () => {
    const named = namedBySource(sourceCode());
    expect([...retiring].filter(named)).toEqual([]);
    const { rows } = await t.db.query<{ name: string }>(
      "select p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'refdata' and p.proname = any($1)",
      [[...retiring]],
    );
    expect(rows.map((r) => r.name).sort()).toEqual([...retiring].sort());
  });

  it("still answer the previous release's calls, writing through the one writer", async () => {
    const row = (hash: string) => ({
      list_key: 'shipment_modes',
      variant: 'default',
      status: 'ok',
      content_hash: hash,
      entry_count: 3,
      changed: true,
      added: 3,
      removed: 0,
      modified: 0,
      reappeared: 0,
      reshaped: 0,
      fields: ['code'],
      pages: 1,
      duration_ms: 5,
      replaced_values: 0,
      nonconforming: 0,
      schema_accepted: false,
    });
    await t.db.query('select * from refdata.write_snapshots($1, $2)', ['retiring', JSON.stringify([row('aaa')])]);
    const args = ['retiring', 'shipment_modes', 'default', 'aaa', null, 3, ['code'], 1, 7, 0];
    const alone = await t.db.query<{ snapshot_id: string; run_advanced: boolean }>(
      'select * from refdata.record_unchanged($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,false)',
      args,
    );
    expect(alone.rows).toEqual([{ snapshot_id: expect.anything(), run_advanced: false }]);
    const opened = await t.db.query<{ unchanged_snapshot_id: string | null }>(
      'select unchanged_snapshot_id from refdata.lock_target_state_or_record_unchanged($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)',
      args,
    );
    const other = await t.db.query<{ snapshot_id: string | null }>('select snapshot_id from refdata.record_unchanged($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,false)', [
      ...args.slice(0, 3),
      'bbb',
      ...args.slice(4),
    ]);
    expect(other.rows).toEqual([{ snapshot_id: null }]);
    const { rows } = await t.db.query(
      "select id::text, status, changed, added, content_hash, entry_count, duration_ms from refdata.snapshots where environment = 'retiring' order by id",
    );
    expect(rows).toEqual([
      { id: expect.any(String), status: 'ok', changed: true, added: 3, content_hash: 'aaa', entry_count: 3, duration_ms: 5 },
      { id: String(alone.rows[0]!.snapshot_id), status: 'ok', changed: false, added: 0, content_hash: 'aaa', entry_count: 3, duration_ms: 7 },
      { id: String(opened.rows[0]!.unchanged_snapshot_id), status: 'ok', changed: false, added: 0, content_hash: 'aaa', entry_count: 3, duration_ms: 7 },
    ]);
  });

  it('finds a function nothing calls', async () => {
    // Created in a transaction that is then rolled back, so the file's other case never sees it.
    let found: string[] = [];
    const rolledBack = new Error('rolled back');
    await expect(
      t.db.withConnection((conn) =>
        conn.transaction(async (tx) => {
          await tx.query('create function refdata.nobody_calls_this() returns integer language sql as $$ select 1 $$');
          found = await uncalledFunctions(tx);
          throw rolledBack;
        }),
      ),
    ).rejects.toBe(rolledBack);
    expect(found).toEqual(['refdata.nobody_calls_this()']);
  });
});

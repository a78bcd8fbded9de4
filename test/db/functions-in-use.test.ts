// No dead SQL: every function of schema refdata in a migrated database is called by something. A
// function that neither the code in src/ calls (comments aside), nor the contract lists as public (docs/contract.md), nor a
// trigger, view or default of the database uses, nor a function in use calls in its body, is one
// a migration should have dropped: once code stops calling it, it drifts from the code that replaced it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listKeys } from '../../src/catalog/list-keys.ts';
import { listFunctionNames } from '../../src/columns/columns-sql.ts';
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
  const live = new Set(rows.filter((f) => f.used_by_database || named(f.name) || publicNames.has(f.name) || perList.has(f.name)).map((f) => f.name));
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

// drizzle-kit's view of the schema stays true (docs/production.md, "Upgrading", for contributors):
// every migration has its meta snapshot, so `npm run db:generate` on an unchanged src/db/schema.ts
// writes nothing; and the database the migrations build is the one src/db/schema.ts describes,
// compared by introspection (`drizzle-kit pull`) against drizzle-kit's own reading of schema.ts.
import { execFile } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as schema from '../../src/db/schema.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const drizzleKit = join(root, 'node_modules/drizzle-kit/bin.cjs');
const scratch = testTempDir('h30-refsync-drizzle');

/** Every file under dir with its contents, by relative path. */
function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[relative(dir, path)] = readFileSync(path, 'utf8');
  }
  return out;
}

interface Snapshot {
  id: string;
  prevId: string;
  tables: Record<string, Table>;
}
interface Table {
  columns: Record<string, { name: string; type: string; primaryKey: boolean; notNull: boolean; default?: unknown }>;
  indexes: Record<string, { isUnique: boolean; where?: string; columns: Array<{ expression: string; asc: boolean; nulls: string }> }>;
  foreignKeys: Record<string, { tableTo: string; columnsFrom: string[]; columnsTo: string[]; onDelete?: string }>;
  compositePrimaryKeys: Record<string, { columns: string[] }>;
  uniqueConstraints: Record<string, { columns: string[] }>;
  checkConstraints: Record<string, unknown>;
}

/**
 * What a table is, without the spellings that differ between drizzle-kit reading TypeScript and
 * reading Postgres: index predicates and check expressions as Postgres prints them back
 * (`(status = 'ok'::text)`), and the operator classes only introspection reports. Their presence
 * and names still count.
 */
function shape(tables: Record<string, Table>) {
  return Object.fromEntries(
    Object.entries(tables).map(([name, t]) => [
      name,
      {
        columns: t.columns,
        indexes: Object.fromEntries(
          Object.entries(t.indexes).map(([n, i]) => [
            n,
            { unique: i.isUnique, partial: Boolean(i.where), columns: i.columns.map((c) => `${c.expression} ${c.asc ? 'asc' : 'desc'} nulls ${c.nulls}`) },
          ]),
        ),
        foreignKeys: Object.fromEntries(Object.entries(t.foreignKeys).map(([n, f]) => [n, [f.columnsFrom, f.tableTo, f.columnsTo, f.onDelete]])),
        primaryKeys: t.compositePrimaryKeys,
        uniqueConstraints: t.uniqueConstraints,
        checks: Object.keys(t.checkConstraints).sort(),
      },
    ]),
  );
}

describe('drizzle-kit meta', () => {
  it('has a snapshot for every migration of the journal, chained by prevId', () => {
    const journal = JSON.parse(readFileSync(join(root, 'migrations/meta/_journal.json'), 'utf8')) as { entries: Array<{ idx: number }> };
    let prev = '00000000-0000-0000-0000-000000000000';
    for (const { idx } of journal.entries) {
      const snapshot = JSON.parse(readFileSync(join(root, `migrations/meta/${String(idx).padStart(4, '0')}_snapshot.json`), 'utf8')) as Snapshot;
      expect(snapshot.prevId, `snapshot ${idx} follows the one before`).toBe(prev);
      prev = snapshot.id;
    }
  });

  it('`drizzle-kit generate` on the unchanged schema writes nothing, and `drizzle-kit check` passes', async () => {
    const copy = join(scratch, 'generate');
    for (const path of ['drizzle.config.ts', 'package.json', 'src/db/schema.ts', 'migrations']) cpSync(join(root, path), join(copy, path), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
    const before = filesOf(join(copy, 'migrations'));
    const generated = await run(process.execPath, [drizzleKit, 'generate'], { cwd: copy });
    expect(filesOf(join(copy, 'migrations')), `drizzle-kit generate wrote files:\n${generated.stdout}`).toEqual(before);
    await run(process.execPath, [drizzleKit, 'check'], { cwd: copy });
  }, 120_000);

  describe('the migrated database', () => {
    const t = useTestDatabase();
    it('has the tables, columns, keys and indexes of src/db/schema.ts (introspected with drizzle-kit pull)', async () => {
      const dir = join(scratch, 'pull');
      const config = join(dir, 'drizzle.config.mjs');
      rmSync(dir, { recursive: true, force: true });
      cpSync(join(root, 'package.json'), join(dir, 'package.json'));
      writeFileSync(
        config,
        `export default ${JSON.stringify({ dialect: 'postgresql', out: './out', schemaFilter: ['refdata'], dbCredentials: { url: t.url } })};\n`,
      );
      await run(process.execPath, [drizzleKit, 'pull', '--config', config], { cwd: dir });
      const database = JSON.parse(readFileSync(join(dir, 'out/meta/0000_snapshot.json'), 'utf8')) as Snapshot;
      const { generateDrizzleJson } = await import('drizzle-kit/api');
      const declared = generateDrizzleJson(schema, undefined, ['refdata']) as unknown as Snapshot;
      expect(shape(database.tables)).toEqual(shape(declared.tables));
    }, 120_000);
  });
});

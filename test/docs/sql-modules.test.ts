// Every statement on refsync's own relations (schema refdata, the migrations journal, the session
// tables a sync makes) is written in a SQL module of its stage, so that the logic elsewhere reads as
// calls and a statement is found under its name: a file named `sql.ts` or `*-sql.ts`
// (docs/architecture.md, "Where SQL lives"). The source is parsed, and every string or template that
// opens with a statement naming such a relation anywhere else fails this test with its file and
// line, unless its file is allowed below for the reason given there.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAst } from 'vite';
import { describe, expect, it } from 'vitest';
import { repoRoot, sourceFiles } from '../helpers/source-files.ts';

/** A SQL module: where statements are written. `refsync sql`'s command is called sql.ts but holds none. */
const isSqlModule = (file: string): boolean => /(^|\/|-)sql\.ts$/.test(file) && file !== 'src/cli/commands/sql.ts';

/** Files that write statements outside a SQL module, each for its reason. */
const allowed: Record<string, string> = {
  'src/dbt/sources.ts': "dbt's freshness expression, written into sources.yml for dbt to run, never run by refsync",
};

/** The first words of a statement (leading spaces and parentheses aside). */
const STATEMENT =
  /^[\s(]*(?:(?:select|insert\s+into|update\s+\S+(?:\s+(?:as\s+)?\w+)?\s+set|delete\s+from|with\s+(?:recursive\s+)?\w+\s+as|create|alter|drop|truncate|lock\s+table|analyze|vacuum|grant|revoke|comment\s+on|do|explain|values)\b|copy\s+(?:\(|\S+\s+(?:\(|from\b|to\b)))/i;
/** A relation of refsync's: schema refdata, drizzle's migrations journal, or one named by a value (a session table, a view). */
const REFSYNC_RELATION = /\brefdata\.|\bdrizzle\.|\b(from|join|into|update|table|view|copy|analyze|on)\s+\$\{\}/i;

/** Whether a string's text is a statement on refsync's relations (`${}` stands for each interpolation). */
function isStatementOnRefsync(text: string): boolean {
  return STATEMENT.test(text) && REFSYNC_RELATION.test(text);
}

interface Found {
  file: string;
  line: number;
  text: string;
}

type Node = { type?: string; start: number; value?: unknown; quasis?: { value: { raw: string; cooked?: string | null } }[] };

function* nodes(value: unknown): Generator<Node> {
  if (!value || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) yield* nodes(item);
    return;
  }
  if (typeof (value as Node).type === 'string') yield value as Node;
  for (const child of Object.values(value)) yield* nodes(child);
}

/** The text of a string literal or template (interpolations as `${}`), else undefined. */
function textOf(node: Node): string | undefined {
  if (node.type === 'Literal' && typeof node.value === 'string') return node.value;
  if (node.type === 'TemplateLiteral') return node.quasis!.map((q) => q.value.cooked ?? q.value.raw).join('${}');
  return undefined;
}

/** The statements on refsync's relations that a file's source writes, with their lines. */
function statementsIn(file: string, source: string): Found[] {
  const found: Found[] = [];
  for (const node of nodes(parseAst(source, { lang: 'ts' }, file))) {
    const text = textOf(node);
    if (text !== undefined && isStatementOnRefsync(text)) {
      found.push({ file, line: source.slice(0, node.start).split('\n').length, text: text.replace(/\s+/g, ' ').trim().slice(0, 80) });
    }
  }
  return found;
}

const files = sourceFiles('src').filter((f) => !f.endsWith('.d.ts'));
const outside = files.filter((f) => !isSqlModule(f) && !(f in allowed)).flatMap((f) => statementsIn(f, readFileSync(join(repoRoot, f), 'utf8')));

describe('SQL in named modules', () => {
  it('no statement on refsync relations is written outside the SQL modules', () => {
    expect(outside.map((s) => `${s.file}:${s.line}: ${s.text}`)).toEqual([]);
  });

  it('each allowed file still writes a statement and says why', () => {
    for (const [file, why] of Object.entries(allowed)) {
      expect(statementsIn(file, readFileSync(join(repoRoot, file), 'utf8')).length, `${file} writes no statement: take it off the list`).toBeGreaterThan(0);
      expect(why.length).toBeGreaterThan(20);
    }
  });

  it('finds a statement wherever the source writes one', () => {
    const source = [
      "const a = 'update refdata.snapshots set error = $2 where id = $1';",
      'const b = `select 1 from refdata.snapshots where run_id = $1 and ${where} limit 1`;',
      'const c = `\n  with gone as (delete from ${table} where id = any($1)) select 1`;',
      "const d = 'select clock_timestamp() as now';",
      'const e = \'Example: refsync sql "select * from refdata.list_sync_times"\';',
      "const f = 'begin';",
    ].join('\n');
    expect(statementsIn('src/example.ts', source).map((s) => s.line)).toEqual([1, 2, 3]);
  });

  it('names the SQL modules by their file name', () => {
    expect(files.filter(isSqlModule)).toContain('src/sync/sql.ts');
    expect(isSqlModule('src/alerts/outbox-sql.ts')).toBe(true);
    expect(isSqlModule('src/cli/commands/sql.ts')).toBe(false);
    expect(isSqlModule('src/cli/sql-repl.ts')).toBe(false);
  });
});

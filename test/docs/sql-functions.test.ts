// The body in force of every refdata function is readable in one place: docs/sql-functions.md is
// what scripts/sql-functions-docs.ts prints from a database the migrations of migrations/ made.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sqlFunctionsMarkdown, sqlFunctionsPath, userPages } from '../../scripts/sql-functions-docs.ts';

describe('docs/sql-functions.md', () => {
  it('holds the body in force of every refdata function, as the migrations leave it', async () => {
    const expected = await sqlFunctionsMarkdown();
    expect(readFileSync(sqlFunctionsPath, 'utf8'), 'docs/sql-functions.md out of date: run `node scripts/sql-functions-docs.ts`').toBe(expected);
  }, 60_000);

  it('shows a function redefined by a later migration as the later one left it', async () => {
    const page = readFileSync(sqlFunctionsPath, 'utf8');
    const section = page.slice(page.indexOf('## `refdata.run_progress('), page.indexOf('## `refdata.target_lock_key('));
    expect(section).toContain('Defined last in `migrations/0012_unchanged_in_one_statement.sql`.');
    const migration = readFileSync(new URL('../../migrations/0012_unchanged_in_one_statement.sql', import.meta.url), 'utf8');
    expect(migration).toMatch(/CREATE OR REPLACE FUNCTION refdata\.run_progress/);
  });

  it("marks every function public, internal helper or internal, and the data teams' pages call only public ones", () => {
    const page = readFileSync(sqlFunctionsPath, 'utf8');
    const sections = page.split('\n## ').slice(1);
    expect(sections.length).toBeGreaterThan(20);
    for (const section of sections) expect(section.split('\n')[2], section.split('\n')[0]).toMatch(/^\*\*(Public|Internal helper|Internal)\*\*: /);
    const listed = (label: string) => [...(page.match(new RegExp(`^- ${label}: (.*)$`, 'm'))?.[1] ?? '').matchAll(/`refdata\.(\w+)`/g)].map((m) => m[1]!);
    const notPublic = [...listed('Internal helpers'), ...listed('Internal')];
    expect(listed('Internal')).toContain('track_last_ok');
    const root = new URL('../../', import.meta.url);
    for (const doc of userPages) {
      const called = [...readFileSync(new URL(doc, root), 'utf8').matchAll(/\brefdata\.(\w+)\(/g)].map((m) => m[1]!);
      expect(
        called.filter((name) => notPublic.includes(name)),
        doc,
      ).toEqual([]);
    }
  });
});

// What one page says that another page, or the code, also says: held equal here so they cannot
// contradict each other. The settings are in settings.test.ts, links in links.test.ts.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { changeKinds } from '../../src/sync/outcome/target-outcome.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The text of a Markdown page from one heading to the next heading of the same or a higher level. */
function section(page: string, heading: string): string {
  const text = read(page);
  const start = text.indexOf(heading);
  expect(start, `${page}: ${heading}`).toBeGreaterThanOrEqual(0);
  const level = heading.match(/^#+/)![0];
  const next = text.slice(start + heading.length).search(new RegExp(`^#{1,${level.length}} `, 'm'));
  return next < 0 ? text.slice(start) : text.slice(start, start + heading.length + next);
}

describe('docs agree with the code and with each other', () => {
  it('querying.md and the contract name every change kind of refdata.entry_changes', () => {
    const guide = section('docs/querying.md', '## Changes: `refdata.entry_changes`');
    const contract = read('docs/contract.md')
      .split('\n')
      .find((line) => line.startsWith('- Change kinds of `refdata.entry_changes`'))!;
    for (const kind of changeKinds) {
      expect(guide, kind).toContain(`\`${kind}\``);
      expect(contract, kind).toContain(`\`${kind}\``);
    }
  });

  it('querying.md names the nonconforming column and says an odd value reads NULL, as schema-changes.md does', () => {
    const guide = section('docs/querying.md', '## The views: what is current, with a typed column per field');
    expect(guide).toMatch(/`nonconforming` \(`jsonb`/);
    expect(guide).toMatch(/ nonconforming +\| jsonb/);
    expect(guide).toMatch(/column stays `bigint`,[\s\S]*reads \*\*NULL\*\*/);
    expect(guide).not.toMatch(/makes the column `text`/);
    expect(read('docs/schema-changes.md')).toMatch(/the column stays `bigint`[\s\S]*\*\*NULL\*\*/);
  });

  it('terminal.md explains every symbol of the sync result line', () => {
    const source = read('src/cli/output/sync-report.ts');
    const symbols = [...source.matchAll(/([^\s`{}$]+)\$\{c\.(\w+)\}/g)].map((m) => [m[1]!, m[2]!] as const);
    expect(symbols.map(([, kind]) => kind)).toEqual(['added', 'removed', 'modified', 'reappeared', 'reshaped']);
    const page = section('docs/terminal.md', '## The result lines of `refsync sync`');
    for (const [symbol, kind] of symbols) expect(page, `${symbol} (${kind})`).toContain(`| \`${symbol}N\` | entries ${kind}`);
  });

  it("the docs index names every page of docs/, and README's Documentation section leads to it", () => {
    const index = read('docs/README.md');
    const pages = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md') && f !== 'README.md');
    expect(pages.filter((page) => !index.includes(`](${page})`))).toEqual([]);
    expect(index).toContain('](../CONTRIBUTING.md)');
    expect(section('README.md', '## Documentation')).toContain('](docs/README.md)');
  });

  it("the README's secret files (./secrets/...) are git-ignored", () => {
    const paths = [...read('README.md').matchAll(/_FILE=(\.\/secrets\/[\w.-]+)/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) expect(execFileSync('git', ['check-ignore', path], { cwd: root, encoding: 'utf8' }).trim(), path).toBe(path);
  });

  it('a link whose text names a page points to that page', () => {
    const wrong: string[] = [];
    for (const page of ['README.md', ...readdirSync(join(root, 'docs')).map((f) => `docs/${f}`)]) {
      if (!page.endsWith('.md')) continue;
      for (const [link, text, target] of read(page).matchAll(/\[(?:docs\/)?([\w-]+\.md)\]\(([^)#]*)/g)) {
        if (!target!.endsWith(text!)) wrong.push(`${page}: ${link}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

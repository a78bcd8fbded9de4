// docs/contract.md names every public name, and its reference part is what scripts/contract-docs.ts
// reads from the code: the commands and flags, settings, lists, tables, views, functions, metrics,
// alert kinds and error codes. The pages that list some of the same names agree with it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands.ts';
import { contractPath, contractWithReference, metricNames } from '../../scripts/contract-docs.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, 'utf8');

describe('docs/contract.md', () => {
  it('holds the reference generated from the code', async () => {
    const page = readFileSync(contractPath, 'utf8');
    expect(page, 'out of date: run `node scripts/contract-docs.ts`').toBe(await contractWithReference(page));
  }, 60_000);

  it('names every command, the views and functions data teams read, and the reader role', () => {
    const page = read('docs/contract.md');
    for (const c of commands) expect(page).toContain(`| \`refsync ${c.name}`);
    for (const name of [
      'refdata.change_feed`',
      'refdata.list_sync_times`',
      'refdata.<list>_history',
      'refdata.<list>_as_of',
      '`refdata_reader`',
      '`refsync_entries`',
    ]) {
      expect(page, name).toContain(name);
    }
  });

  it('has no dated headings and no instructions to an implementer', () => {
    const page = read('docs/contract.md');
    expect(page).not.toMatch(/^#+ .*\(added \d{4}-\d\d-\d\d\)/m);
    expect(page).not.toMatch(/treat as likely|is the project's to design|Keep the base path/);
  });

  it("operations.md's metrics table names the metrics the code registers, no more, no fewer", () => {
    const documented = [...read('docs/operations.md').matchAll(/^\| `(refsync_[a-z_]+)`/gm)].map((m) => m[1]!);
    expect([...new Set(documented)].sort()).toEqual(metricNames());
  });

  it("the README's command table names every command, and only commands", () => {
    const table = [...read('README.md').matchAll(/^\| `refsync ([a-z-]+)/gm)].map((m) => m[1]!);
    const names = commands.map((c) => c.name as string);
    expect(table.filter((n) => !names.includes(n))).toEqual([]);
    expect(names.filter((n) => !table.includes(n))).toEqual([]);
  });
});

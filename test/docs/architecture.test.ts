// docs/architecture.md is a map of the code: every path it names must exist, every `file#name`
// must name something that file defines, and every folder under src/ must have its paragraph.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(`${root}docs/architecture.md`, 'utf8');
/** Code spans that are paths into the repository, with an optional #name. */
const refs = [...doc.matchAll(/`((?:src|migrations|test|bench|docs)\/[^`#\s]+)(?:#(\w+))?`/g)].map((m) => ({ path: m[1]!, name: m[2] }));

describe('docs/architecture.md', () => {
  it('names files that exist', () => {
    expect(refs.length).toBeGreaterThan(40);
    expect(refs.filter((r) => !existsSync(`${root}${r.path}`)).map((r) => r.path)).toEqual([]);
  });

  it('names functions and classes their files define', () => {
    const missing = refs
      .filter((r) => r.name !== undefined)
      .filter(
        (r) =>
          !new RegExp(`(?:function|class|const|interface)\\s+${r.name}\\b|^\\s+(?:async\\s+)?${r.name}\\(`, 'm').test(readFileSync(`${root}${r.path}`, 'utf8')),
      )
      .map((r) => `${r.path}#${r.name}`);
    expect(missing).toEqual([]);
  });

  it('has a paragraph for every folder under src/', () => {
    const folders = readdirSync(`${root}src`, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect(folders.filter((f) => !doc.includes(`- **src/${f}/**`))).toEqual([]);
  });
});

// Code in src/, bench/ and scripts/ points readers to the docs: `docs/X.md`, `docs/X.md#anchor`,
// `docs/X.md, "Section"` (or `"Section" in docs/X.md`), and `docs/X.md, P4` for a benchmark. Each
// must lead to a page and a section that exist, and never to the project's history (a round, an
// issue or a session of work): those sections are gone, and a maintainer following one finds nothing.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, headingsOf, headingText } from './markdown.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
  );
}

const files = ['src', 'bench', 'scripts'].flatMap(sourceFiles);

/** A file's text with comment continuations joined, so a reference broken over two comment lines reads whole. */
function joined(text: string): string {
  return text.replace(/\s*\n\s*(?:\/\/|\*(?!\/))\s*/g, ' ');
}

const quote = '["“]([^"”]{3,80})["”]';
const page = String.raw`docs/([\w-]+\.md)`;
const patterns = {
  anchor: new RegExp(String.raw`${page}#([\w-]+)`, 'g'),
  sectionAfter: new RegExp(String.raw`${page},? \(?${quote}`, 'g'),
  sectionBefore: new RegExp(`${quote},? in ${page}`, 'g'),
  words: new RegExp(`${page}, ([^"“(),;.:]{1,40})`, 'g'),
  bare: new RegExp(page, 'g'),
};
const history = /\b(?:round|issue|session|sitting)s?\b|performance-log/i;

/** Whether a section title names a heading of the page: the heading itself, or its start. */
function hasSection(file: string, title: string): boolean {
  const wanted = title.toLowerCase().replace(/`/g, '');
  return headingsOf(file).some((h) => headingText(h).toLowerCase().startsWith(wanted));
}

/** What is wrong with the docs references of one source file. */
function brokenReferences(name: string, text: string): string[] {
  const body = joined(text);
  const wrong: string[] = [];
  const doc = (p: string) => join(root, 'docs', p);
  for (const [, p] of body.matchAll(patterns.bare)) if (!existsSync(doc(p!))) wrong.push(`${name}: docs/${p}: no such page`);
  for (const [ref, p, anchor] of body.matchAll(patterns.anchor)) {
    if (existsSync(doc(p!)) && !anchorsOf(doc(p!)).has(anchor!)) wrong.push(`${name}: ${ref}: no such heading`);
  }
  for (const [ref, p, title] of [...body.matchAll(patterns.sectionAfter)].map((m) => [m[0], m[1], m[2]])) {
    if (existsSync(doc(p!)) && !hasSection(doc(p!), title!)) wrong.push(`${name}: ${ref}: no such section`);
  }
  for (const [ref, title, p] of body.matchAll(patterns.sectionBefore)) {
    if (existsSync(doc(p!)) && !hasSection(doc(p!), title!)) wrong.push(`${name}: ${ref}: no such section`);
  }
  for (const [ref, p, words] of body.matchAll(patterns.words)) {
    if (history.test(words!)) {
      wrong.push(`${name}: ${ref}: the project's history, not a section`);
      continue;
    }
    // A benchmark named after the page (`docs/performance.md, P4`) must have a heading of its own.
    for (const [figure] of words!.matchAll(/\bP\d\b/g)) {
      if (existsSync(doc(p!)) && !headingsOf(doc(p!)).some((h) => new RegExp(`\\b${figure}\\b`).test(h))) {
        wrong.push(`${name}: ${ref}: no heading names ${figure}`);
      }
    }
  }
  return wrong;
}

describe('docs references in src/, bench/ and scripts/', () => {
  it('finds the files and their references', () => {
    expect(files).toContain('src/db/database.ts');
    const count = files.reduce((n, f) => n + [...readFileSync(join(root, f), 'utf8').matchAll(patterns.bare)].length, 0);
    expect(count).toBeGreaterThan(50);
  });

  it('every reference leads to a page, and to a heading of it that exists', () => {
    expect(files.flatMap((f) => brokenReferences(relative(root, join(root, f)), readFileSync(join(root, f), 'utf8')))).toEqual([]);
  });

  it('catches each kind of broken reference, and passes good ones', () => {
    const bad = [
      '// see docs/nowhere.md',
      '// (docs/production.md#no-such-anchor)',
      '// (docs/production.md, "No such section")',
      '// see "No such section" in docs/production.md',
      '// (docs/performance.md, round sixteen)',
      '// (docs/performance.md,\n// issue 36)',
      '// (docs/performance.md, P9)',
    ];
    for (const sample of bad) expect(brokenReferences('x.ts', sample), sample).toHaveLength(1);
    const good = [
      '// (docs/production.md#upgrading)',
      '// (docs/production.md, "Upgrading")',
      '// see "Upgrading" in docs/production.md',
      '// (docs/production.md, "Managed\n   * Postgres")',
      '// (docs/performance.md, P3 and P6)',
      '// (docs/contract.md)',
    ];
    for (const sample of good) expect(brokenReferences('x.ts', sample), sample).toEqual([]);
  });
});

/** Where a line names one of the project's issues by number: the history, which a reader cannot follow. */
const issueNumber = /\bissue #?\d+\b|\bissues #\d+/i;

/** The lines of a file that name an issue by number. */
function issueCitations(name: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => (issueNumber.test(line) ? [`${name}:${i + 1}: ${line.trim().slice(0, 120)}`] : []));
}

describe("the project's issues in code", () => {
  // The two files whose samples quote a citation on purpose, to show the checks catch it.
  const samples = new Set(['test/docs/code-references.test.ts', 'test/docs/narrative.test.ts']);
  const code = [...files, ...sourceFiles('test').filter((f) => !samples.has(f))];

  it('no file of src/, bench/, scripts/ or test/ names an issue by its number: a comment says why, not when', () => {
    expect(code).toContain('test/helpers/db.ts');
    expect(code.flatMap((f) => issueCitations(f, readFileSync(join(root, f), 'utf8')))).toEqual([]);
  });

  it('catches a citation, and leaves product words alone', () => {
    for (const sample of ['// (issue 31): the guards', "it('says it once (issue 59)'", '// see issue #12'])
      expect(issueCitations('x.ts', sample), sample).toHaveLength(1);
    for (const sample of ['// an issue of the upstream', '// issues 0 requests', 'expect(issues).toHaveLength(2)'])
      expect(issueCitations('x.ts', sample), sample).toEqual([]);
  });
});

// README.md, CONTRIBUTING.md and docs/ speak to the people who use and maintain refsync: they say
// what the product does, not how and when it was built. Commit messages and CHANGELOG.md carry
// history, so a page that names a commit, an issue, a work session or the hour something was
// measured fails here. Fenced code blocks are left alone (a sample may print a hash or a time);
// inline code is checked for commit-like hashes only.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(`${dir}/${e.name}`) : e.name.endsWith('.md') ? [`${dir}/${e.name}`] : [],
  );
}

const pages = ['README.md', 'CONTRIBUTING.md', ...markdownFiles('docs')].filter((p) => existsSync(join(root, p)));

const ordinal = String.raw`(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|\d+(?:st|nd|rd|th))`;
const number = String.raw`(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen)`;

/** What a page must not say, each with why. Matched against the prose, code spans removed. */
const narrative: [string, RegExp][] = [
  ['an issue number', /\b(?:issues?|PR|pull request)\s+#?\d+\b/i],
  ['an issue reference', /(?:^|[\s(])#\d{1,5}\b/],
  ['a work round', new RegExp(String.raw`\bround[- ]by[- ]round\b|\bround ${number}\b|\b${ordinal} round\b|\brounds ${number}\b`, 'i')],
  [
    'a work session',
    new RegExp(
      String.raw`\b(?:this|that|next|previous) (?:session|sitting)\b|\b${ordinal} (?:session|sitting)s?\b|\b(?:session|sitting) ${number}\b|\bsittings?\b`,
      'i',
    ),
  ],
  ['a virtual machine the project ran on', /\bVMs?\b/],
  ['the hour something was done', /\b\d{1,2}:\d{2}(?:\s*(?:-|to)\s*\d{1,2}:\d{2})?\s*UTC\b|\b20\d\d-\d\d-\d\d,? \d{1,2}:\d{2}\b/],
  [
    'the time of day something was measured',
    /\b(?:this|that|yesterday|the same|a quiet|the quieter|the slow|the slower|the fast) (?:morning|afternoon|evening|night)\b|\bthe night before\b|\ban hour later\b/i,
  ],
  ['the development log', /performance-log/i],
];

/** A commit-like hash: 7 to 40 hex digits with a letter and a digit, standing alone (not part of a URL, path or longer token). */
const commitLike = /(?<![\w#./:-])(?!\d+e\d+\b)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/-])/g;

function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ''));
}

/** Lines of a page that say what they must not, as `page:line: why: text`. */
function narrativeIn(page: string, markdown: string): string[] {
  const found: string[] = [];
  const text = withoutFences(markdown);
  // Code spans may run over a line break: blank them out over the whole text, keeping its lines.
  const proseLines = text.replace(/(`+)[\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, '')).split('\n');
  text.split('\n').forEach((line, i) => {
    const prose = proseLines[i] ?? '';
    for (const [why, pattern] of narrative) if (pattern.test(prose)) found.push(`${page}:${i + 1}: ${why}: ${line.trim().slice(0, 120)}`);
    // Inline code too: a hash in backticks is still a commit.
    for (const [hash] of line.matchAll(commitLike)) found.push(`${page}:${i + 1}: a commit hash (${hash}): ${line.trim().slice(0, 120)}`);
  });
  return found;
}

describe('no development narrative in README.md, CONTRIBUTING.md and docs/', () => {
  it('finds the pages', () => {
    expect(pages).toContain('README.md');
    expect(pages).toContain('docs/performance.md');
  });

  it('no page names a commit, an issue, a round or session of work, a VM or the hour of a measurement', () => {
    expect(pages.flatMap((page) => narrativeIn(page, readFileSync(join(root, page), 'utf8')))).toEqual([]);
  });

  it('catches each kind of narrative', () => {
    const samples = [
      'measured on 69c1250 and',
      'the fix (`185a205`) landed',
      'as issue 58 asked',
      'see #42 for that',
      'in round seven we tried',
      'the round-by-round log',
      'the eleventh session measured',
      "the ninth session's change",
      'in one sitting',
      'on a slow VM',
      'the run (08:19-08:31 UTC)',
      'on 2026-11-26 21:47 it took',
      'the night before it missed',
    ];
    for (const sample of samples) expect(narrativeIn('x.md', sample), sample).toHaveLength(1);
  });

  it('leaves product language alone', () => {
    const fine = [
      'a session left idle in transaction holds it',
      "the session's own role",
      "an analyst's session, and every session's start",
      'values round to the nearest cent; a round trip per statement',
      'the digest `sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08` of the body',
      'a Slack URL (`https://hooks.slack.com/…#80d214c98280`)',
      'a timestamp `1795843451` and `2026-11-28T05:24:11.816Z`',
      'a position `00000000000000000000-00000000000000000000`',
      'the fixture `test/fixtures/upgrade-1905028.sh`',
      'the size `33554432` and `deadbeef` as a word; a number `1e1000000` no double holds',
      '```\nrun 2 (demo-20261125-113804) at 08:19 UTC, commit 69c1250\n```',
      'as of `2025-01-31 12:00+00`',
      "a schedule of 02:00 every night, in the service's time zone",
    ];
    for (const sample of fine) expect(narrativeIn('x.md', sample), sample).toEqual([]);
  });
});

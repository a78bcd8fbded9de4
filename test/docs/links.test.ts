// Every relative link in README.md, CONTRIBUTING.md and docs/*.md must lead somewhere: the file (or folder) exists,
// and a #fragment names a heading of the Markdown file it points to (GitHub's anchors: lower case,
// punctuation dropped, spaces as hyphens, a repeated heading suffixed -1, -2, ...). Links inside
// code blocks and code spans are text, not links; absolute URLs are left to the reader.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, slug } from './markdown.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pages = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/(`+)[^`]*?\1/g, '');
}

/** Inline links [text](target) and reference definitions [label]: target. */
function linksOf(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const refs = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]!);
  return [...inline, ...refs];
}

/** What is wrong with one link of a page, or undefined when it resolves. */
function brokenLink(page: string, link: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link)) return undefined;
  const [path, fragment] = link.split('#', 2) as [string, string | undefined];
  const target = path === '' ? join(root, page) : join(root, dirname(page), decodeURIComponent(path));
  if (!existsSync(target)) return `${page}: ${link}: no such file ${relative(root, target)}`;
  if (fragment === undefined || fragment === '') return undefined;
  if (statSync(target).isDirectory() || !target.endsWith('.md')) return `${page}: ${link}: an anchor into a file that is not Markdown`;
  return anchorsOf(target).has(decodeURIComponent(fragment).toLowerCase())
    ? undefined
    : `${page}: ${link}: no heading #${fragment} in ${relative(root, target)}`;
}

describe('relative links in README.md and docs/', () => {
  it('finds the pages and their links', () => {
    expect(pages).toContain('docs/configuration.md');
    expect(pages.flatMap((p) => linksOf(readFileSync(join(root, p), 'utf8'))).length).toBeGreaterThan(20);
  });

  it('every relative link leads to a file that exists, and every #anchor to a heading of it', () => {
    const broken = pages.flatMap((page) => linksOf(readFileSync(join(root, page), 'utf8')).map((link) => brokenLink(page, link))).filter(Boolean);
    expect(broken).toEqual([]);
  });

  it('a page named in prose is a link, so this test can check it', () => {
    const prose = (markdown: string) =>
      markdown
        .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ''))
        .replace(/(`+)[\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, ''))
        .replace(/\[[^\]]*\]\([^)]*\)/g, '');
    const unlinked = pages
      .filter((page) => page !== 'docs/sql-functions.md')
      .flatMap((page) =>
        prose(readFileSync(join(root, page), 'utf8'))
          .split('\n')
          .flatMap((line, i) => [...line.matchAll(/\b(?:docs\/)?[\w-]+\.md\b|"[A-Z][^"]{3,60}" (?:above|below)/g)].map((m) => `${page}:${i + 1}: ${m[0]}`)),
      );
    expect(unlinked).toEqual([]);
  });

  it('reads anchors as GitHub makes them', () => {
    expect(slug('Runbook: a held list')).toBe('runbook-a-held-list');
    expect(slug('Secrets via `*_FILE`')).toBe('secrets-via-_file');
    expect(slug('Redis: TLS, ACL users, Sentinel, Cluster')).toBe('redis-tls-acl-users-sentinel-cluster');
    expect(slug('Running the next job: `run_completed` and `LISTEN refdata_runs`')).toBe('running-the-next-job-run_completed-and-listen-refdata_runs');
    expect(slug('P4 first-load slot, 1,000 sources × 23 targets')).toBe('p4-first-load-slot-1000-sources--23-targets');
  });
});

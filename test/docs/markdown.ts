// Headings and anchors of a Markdown page as GitHub makes them, for the tests that check links and
// references into docs/.
import { readFileSync } from 'node:fs';

const fences = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm;

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  const text = headingText(heading).toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
}

/** A heading as it reads: code spans and links as their text. */
export function headingText(heading: string): string {
  return heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim();
}

/** The headings of a Markdown file, outside code blocks, as written. */
export function headingsOf(file: string): string[] {
  const withoutCode = readFileSync(file, 'utf8').replace(fences, '');
  return [...withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)].map((m) => m[1]!);
}

/** Every anchor of a Markdown file, a repeated heading suffixed -1, -2, ... */
export function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const title of headingsOf(file)) {
    const base = slug(title);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

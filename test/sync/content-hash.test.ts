// The content hash is stored (snapshots.content_hash) and compared on every sync: however the
// entries arrive, in key order (hashed as they come) or not (sorted at the end), the bytes must be
// those of the plain definition, or every list would read as changed after an upgrade.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ContentHasher, DuplicateKeyError, KeysOutOfOrder, type HasherOptions } from '../../src/sync/collect/collect.ts';

/** The plain definition: `key NUL digest` lines, sorted, identical ones once, sha-256 of each line and a newline. */
function reference(pairs: Array<[string, string]>): { contentHash: string; entryCount: number } {
  const lines = [...new Set(pairs.map(([k, d]) => `${k}\u0000${d}`))].sort();
  const hash = createHash('sha256');
  for (const line of lines) hash.update(line).update('\n');
  return { contentHash: hash.digest('hex'), entryCount: lines.length };
}

function hashed(pairs: Array<[string, string]>, options: HasherOptions = {}): { contentHash: string; entryCount: number } {
  const hasher = new ContentHasher('test_list', options);
  for (const [k, d] of pairs) hasher.add(k, d);
  return hasher.finish();
}

const digest = (i: number) => createHash('sha256').update(String(i)).digest('base64');
const ordered: Array<[string, string]> = Array.from({ length: 5000 }, (_, i) => [`K${String(i).padStart(6, '0')}`, digest(i)]);

describe('ContentHasher', () => {
  it('lets go of the kept lines past keepAtMost: the same bytes in order, KeysOutOfOrder for a key out of order after it', () => {
    expect(hashed(ordered, { keepAtMost: 1000 })).toEqual(reference(ordered));
    // Out of order before any line was let go: sorted in, as without the limit.
    const early = [ordered[3]!, ...ordered];
    expect(hashed([...ordered.slice(0, 500), ordered[7]!, ...ordered.slice(500)], { keepAtMost: 1000 })).toEqual(reference(ordered));
    expect(hashed(early, { keepAtMost: 1000 })).toEqual(reference(ordered));
    expect(() => hashed([...ordered, ordered[0]!], { keepAtMost: 1000 })).toThrow(KeysOutOfOrder);
    expect(() => hashed([...ordered, ['K004999\nx', digest(-5)]], { keepAtMost: 1000 })).toThrow(KeysOutOfOrder);
    // Sorted from the start, as the fetch that follows does.
    expect(hashed([...ordered].reverse(), { sorted: true })).toEqual(reference(ordered));
    expect(hashed(ordered, { sorted: true })).toEqual(reference(ordered));
  });

  it('hashes a list served in key order like the plain definition, identical duplicates once', () => {
    const withDuplicates = ordered.flatMap((p, i) => (i % 100 === 0 ? [p, p] : [p]));
    expect(hashed(ordered)).toEqual(reference(ordered));
    expect(hashed(withDuplicates)).toEqual(reference(ordered));
  });

  it('gives the same bytes when the order breaks early, late, or the list is reversed', () => {
    const swappedLate = [...ordered];
    [swappedLate[4000], swappedLate[4001]] = [swappedLate[4001]!, swappedLate[4000]!];
    for (const pairs of [[...ordered].reverse(), swappedLate, [ordered[3]!, ...ordered]]) {
      expect(hashed(pairs)).toEqual(reference(ordered));
    }
  });

  it('sorts an unordered list packed over many arena blocks, a key longer than a block among them', () => {
    const many: Array<[string, string]> = Array.from({ length: 90_000 }, (_, i) => [`K${String(i).padStart(6, '0')}`, digest(i)]);
    many.push([`L${'x'.repeat(5 * 2 ** 20)}`, digest(-2)]);
    const shuffled = many
      .map((p, i) => [p, (i * 7919) % many.length] as const)
      .sort((a, b) => a[1] - b[1])
      .map(([p]) => p);
    expect(hashed(shuffled)).toEqual(reference(many));
  });

  it('keeps keys outside latin1 exactly (wide characters, emoji, a lone surrogate, newlines), in any order', () => {
    const keys = ['abc', 'é-latin1', '€uro', '😀 emoji', 'lone \ud800 surrogate', '', 'a|b|', 'zz\u00ff', 'two\nlines', 'nul\u0000'];
    const pairs = keys.map((k, i): [string, string] => [k, digest(i)]);
    expect(hashed(pairs)).toEqual(reference(pairs));
    expect(hashed([...pairs].sort(([a], [b]) => (a < b ? -1 : 1)))).toEqual(reference(pairs));
    // A key with a newline in the middle of a long ordered run, then a key out of order: every
    // line hashed before the newline key must survive the switch to sorting.
    const newlineInside: Array<[string, string]> = [...ordered.slice(0, 3000), ['K002999\nx', digest(-3)], ...ordered.slice(3000), ordered[0]!];
    expect(hashed(newlineInside)).toEqual(reference(newlineInside));
    // The same across chunks of wide keys (kept as UTF-16, a lone surrogate among them).
    const wide: Array<[string, string]> = ordered.map(([k, d], i) => [`€${k}${i === 2500 ? '\ud800' : ''}`, d]);
    expect(hashed([...wide, wide[0]!, ['€', digest(-4)]])).toEqual(reference([...wide, ['€', digest(-4)]]));
  });

  it('fails on two different entries under one key, whether they are adjacent or far apart', () => {
    const adjacent: Array<[string, string]> = [...ordered.slice(0, 10), ['K000009', digest(-1)], ...ordered.slice(10)];
    const apart: Array<[string, string]> = [...ordered, ['K000009', digest(-1)]];
    for (const pairs of [adjacent, apart]) {
      expect(() => hashed(pairs)).toThrow(DuplicateKeyError);
      expect(() => hashed(pairs)).toThrow("test_list: the key 'K000009' appears twice with different contents");
    }
  });
});

// The canonical form and digest are stored (entries.entry_hash, snapshots.content_hash): any change
// to their bytes would show every entry as modified on the next sync after an upgrade. The fast
// implementation must therefore equal the plain one, byte for byte, on every kind of input.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, entryDigest } from '../../src/sync/collect/collect.ts';

/** The plain definition: sort the keys of every object, serialise with JSON.stringify. */
function reference(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${reference((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

const samples: unknown[] = [
  null,
  0,
  -1.5e-7,
  'plain',
  'quote " backslash \\ newline \n tab \t unicode é 😀 \u2028',
  true,
  [],
  {},
  { b: 1, a: 2 },
  { item: '100000', sub: '', description: 'Articles, steel, NOI', class: '100' },
  { description: 'same keys, another order', class: '55', sub: '1', item: '100001' },
  { '10': 'ten', '9': 'nine', a: 'integer-like keys sort as strings', '-1': 'minus' },
  { é: 1, e: 2, E: 3, '': 'empty key', 'key with "quotes"': [1, { z: null, y: [true, false] }] },
  { nested: { z: { b: [{ d: 1, c: 2 }, 'x'], a: null }, y: [] }, list: [[], [[]], {}] },
  { undefinedValue: undefined, fn: 'kept' },
  [1, undefined, { a: [undefined] }],
  JSON.parse('{"__proto__": {"b": 1, "a": 2}, "z": 0}'),
  { when: new Date(0), z: { '0': 'zero', b: 'integer-like key one level down' } },
  Object.assign(Object.create(null) as object, { b: 2, a: 1 }),
  { big: 1e21, small: 5e-324, negativeZero: -0, notFinite: Number.NaN },
  [{ b: 1, a: 1 }, { a: 1, b: 1 }, { c: { b: 1, a: 1 } }],
];

describe('canonicalJson', () => {
  it('equals the plain definition on every kind of input, and the digest is the same sha-256', () => {
    for (const value of samples) {
      expect(canonicalJson(value)).toBe(reference(value));
      const text = canonicalJson(value);
      expect(entryDigest(text)).toBe(createHash('sha256').update(text).digest('base64'));
    }
  });

  it('stays right across more shapes than it caches, revisited in any order', () => {
    const objects = Array.from({ length: 60 }, (_, i) => {
      const keys = Array.from({ length: 1 + (i % 7) }, (_, k) => `k${(k * 7 + i) % 11}_${i % 5}`);
      return Object.fromEntries(keys.reverse().map((k, j) => [k, j % 2 ? { inner: j, [k]: [i] } : `${k}${i}`]));
    });
    for (let round = 0; round < 3; round++) {
      for (const o of round === 1 ? [...objects].reverse() : objects) expect(canonicalJson(o)).toBe(reference(o));
    }
  });

  it('serialises two entries equal in content to the same bytes whatever their key order', () => {
    expect(canonicalJson({ a: 1, b: { d: [1, 2], c: 'x' } })).toBe(canonicalJson({ b: { c: 'x', d: [1, 2] }, a: 1 }));
  });
});

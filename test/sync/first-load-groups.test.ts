import { describe, expect, it } from 'vitest';
import type { Target } from '../../src/catalog/catalog.ts';
import { groupsOf } from '../../src/sync/batch/apply-batch.ts';

// A first sync's held loads go to a few transactions at once; the last of them to end is the sync's
// tail. Each list costs its group its columns and views whatever its size, so the groups are
// balanced on lists as well as rows, and a list key's variants stay in one group.

/** A held load as grouping sees it: the list, the variant and the entry count. */
const load = (key: string, entryCount: number, variant = '') => ({ target: { list: { key }, variant } as Target, collected: { entryCount } });

/** P1's first sync: nmfc_codes' 310 entries, charge_codes' three versions, carrier_package_types' four carriers, fifteen small lists. */
const firstSync = [
  load('nmfc_codes', 310),
  ...['2023-01-01', '2024-01-01', ''].map((v) => load('charge_codes', 45, v)),
  ...['ups', 'fedex', 'dhl', 'usps'].map((v) => load('carrier_package_types', 10, v)),
  ...Array.from({ length: 15 }, (_, i) => load(`list_${String(i).padStart(2, '0')}`, 10 + i)),
];

const keysOf = (group: ReturnType<typeof load>[]) => new Set<string>(group.map((l) => l.target.list.key));

describe('first loads applied together: the groups', () => {
  it('spreads the lists over the groups, a large list with fewer small ones, each key whole', () => {
    const groups = groupsOf(firstSync, 4);
    expect(groups).toHaveLength(4);
    expect(groups.flat()).toHaveLength(firstSync.length);
    const keys = groups.map(keysOf);
    // 18 list keys over 4 groups: none takes more than its share and a large list's group fewer.
    for (const k of keys) expect(k.size).toBeLessThanOrEqual(6);
    expect(keys.find((k) => k.has('nmfc_codes'))!.size).toBeLessThanOrEqual(3);
    for (const key of ['charge_codes', 'carrier_package_types']) expect(keys.filter((k) => k.has(key))).toHaveLength(1);
  });

  it('orders each group by list and variant, and makes no more groups than lists', () => {
    const groups = groupsOf([load('b', 1), load('a', 1, 'y'), load('a', 1, 'x')], 4);
    expect(groups.map((g) => g.map((l) => `${l.target.list.key}:${l.target.variant}`))).toEqual([['a:x', 'a:y'], ['b:']]);
  });
});

// A changed row of a large list is kept past its batch as a copy with strings of its own
// (ownedEntry), so that it does not keep the batch's parsed text alive until its spill. The copy
// must be the same row: every field, any text, a missing code or description.
import { describe, expect, it } from 'vitest';
import { getListDefinition } from '../../src/catalog/catalog.ts';
import { normalizeEntry, ownedEntry } from '../../src/sync/collect/collect.ts';

const accessorials = getListDefinition('accessorials');

describe('ownedEntry', () => {
  it('is the same row, field for field, as a new object', () => {
    const text = JSON.stringify([
      { code: 'LIFTGATE-DELIVERY-SERVICE', name: 'Liftgate delivery at a residence: 北京 façade, emoji 📦', rate: 12.5 },
      { id: 7, flag: true },
    ]);
    for (const raw of JSON.parse(text) as unknown[]) {
      const row = normalizeEntry(accessorials, raw, 0);
      const owned = ownedEntry(row);
      expect(owned).toEqual(row);
      expect(owned).not.toBe(row);
    }
  });

  it('keeps a null code and description null', () => {
    const row = { ...normalizeEntry(accessorials, { id: 9 }, 0), code: null, description: null };
    expect(ownedEntry(row)).toEqual(row);
  });
});

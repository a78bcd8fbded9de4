// The entry-key rules of the catalog, against keys written out by hand: a change to a key rule
// changes which rows a resync closes and opens, so the expected keys are literals, never
// normalizeEntry's own output.
import { describe, expect, it } from 'vitest';
import { getListDefinition } from '../../src/catalog/catalog.ts';
import { EntryShapeError, normalizeEntry } from '../../src/sync/collect/collect.ts';

const nmfc = getListDefinition('nmfc_codes');
const accessorials = getListDefinition('accessorials');
const equipment = getListDefinition('equipment_types');

const keyOf = (list: typeof nmfc, entry: unknown) => normalizeEntry(list, entry, 3).entryKey;

describe('entry keys', () => {
  it('joins a composite key with |', () => {
    expect(keyOf(nmfc, { item: '100', sub: '2', description: 'x' })).toBe('100|2');
    expect(keyOf(nmfc, { item: 4, sub: 1 })).toBe('4|1');
  });

  it('counts a missing or empty part of a composite key as empty', () => {
    expect(keyOf(nmfc, { item: '100' })).toBe('100|');
    expect(keyOf(nmfc, { item: '100', sub: '' })).toBe('100|');
    expect(keyOf(nmfc, { item: '100', sub: null })).toBe('100|');
    expect(keyOf(nmfc, { item: '', sub: '7' })).toBe('|7');
  });

  it('keeps a number with every digit as served', () => {
    const entry = JSON.parse('{"code": 1}') as Record<string, unknown>;
    entry.code = JSON.rawJSON('12345678901234567890');
    expect(keyOf(accessorials, entry)).toBe('12345678901234567890');
  });

  it('uses the list key field, then falls back to the code fields in order', () => {
    expect(keyOf(accessorials, { code: 'LIFT', name: 'Liftgate' })).toBe('LIFT');
    expect(keyOf(equipment, { machine_readable: 'VAN_53', code: 'V' })).toBe('VAN_53');
    // No key field: the code rule, first non-empty of code, machine_readable, value, key, id, name.
    expect(keyOf(equipment, { code: 'V' })).toBe('V');
    expect(keyOf(accessorials, { code: '', value: 'VAL', id: 9 })).toBe('VAL');
    expect(keyOf(accessorials, { id: 9, name: 'Nine' })).toBe('9');
    expect(keyOf(accessorials, { flag: true, name: 'Only a name' })).toBe('Only a name');
    // A composite key with no part present falls back to the code fields (code, then item).
    expect(keyOf(nmfc, { code: 'N-1' })).toBe('N-1');
  });

  it('is a shape error naming the list and the entry when no key field nor code is there', () => {
    expect(() => keyOf(accessorials, { description: 'no code' })).toThrow(EntryShapeError);
    expect(() => keyOf(accessorials, { description: 'no code' })).toThrow(
      'accessorials: entry 3 has none of the key fields code nor a code (code, machine_readable, value, key, id, name)',
    );
    expect(() => keyOf(nmfc, { item: '', sub: '' })).toThrow('nmfc_codes: entry 3 has none of the key fields item, sub nor a code (code, item)');
    // An object or array is not a key part.
    expect(() => keyOf(accessorials, { code: { nested: 1 } })).toThrow(EntryShapeError);
  });

  it('is a shape error when an entry is not an object', () => {
    expect(() => keyOf(accessorials, ['LIFT'])).toThrow('accessorials: entry 3 is an array, not an object');
    expect(() => keyOf(accessorials, 'LIFT')).toThrow('accessorials: entry 3 is string, not an object');
    expect(() => keyOf(accessorials, null)).toThrow('accessorials: entry 3 is object, not an object');
  });
});

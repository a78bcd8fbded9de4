// A row the sync keeps past its batch is a copy of the row normalised (keptEntry), so that the rows
// normalised all die young. The copy must be the same row: every field, any text, a missing code or
// description; and the rows a fetch keeps, of a small list or a large one, are such copies.
import { describe, expect, it } from 'vitest';
import { getListDefinition, targetsFor } from '../../src/catalog/catalog.ts';
import { keptEntry, normalizeEntry } from '../../src/sync/collect/collect.ts';
import { loadConfig } from '../../src/config/index.ts';
import { RowsCheck } from '../../src/sync/sync-target.ts';
import type { Connection } from '../../src/db/database.ts';

const accessorials = getListDefinition('accessorials');

describe('keptEntry', () => {
  it('is the same row, field for field, as a new object', () => {
    const text = JSON.stringify([
      { code: 'LIFTGATE-DELIVERY-SERVICE', name: 'Liftgate delivery at a residence: 北京 façade, emoji 📦', rate: 12.5 },
      { id: 7, flag: true },
    ]);
    for (const raw of JSON.parse(text) as unknown[]) {
      const row = normalizeEntry(accessorials, raw, 0);
      const kept = keptEntry(row);
      expect(kept).toEqual(row);
      expect(kept).not.toBe(row);
    }
  });

  it('keeps a null code and description null', () => {
    const row = { ...normalizeEntry(accessorials, { id: 9 }, 0), code: null, description: null };
    expect(keptEntry(row)).toEqual(row);
  });
});

describe('RowsCheck#kept of a list not (yet) large', () => {
  const [source] = loadConfig({ REFSYNC_BASE_URL: 'https://api.vendor.example', REFSYNC_EMAIL: 'machine@acme.example', REFSYNC_PASSWORD: 'pw' }).sources;
  const target = targetsFor(source!, ['accessorials'])[0]!;
  // Below indexAfterEntries no index is read, so the connection is never used.
  const unused = {} as Connection;

  it('keeps every row, each a copy of the row normalised', () => {
    const check = new RowsCheck(unused, target, true, 5_000);
    check.observe(10);
    const rows = [
      { code: 'LIFT', name: 'Liftgate' },
      { code: 'RES', name: 'Residential' },
    ].map((raw, i) => normalizeEntry(accessorials, raw, i));
    const kept = rows.map((row) => check.kept(row));
    expect(kept).toEqual(rows);
    for (const [i, row] of kept.entries()) expect(row).not.toBe(rows[i]);
    expect(check.current).toBeUndefined();
  });
});

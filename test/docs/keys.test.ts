// docs/querying.md's "Keys per list" table is what people join on: it must name every list, its
// key fields as the catalog has them, and say code is unique exactly where the key is one field.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { catalog } from '../../src/catalog/catalog.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(`${root}docs/querying.md`, 'utf8');
const section = doc.slice(doc.indexOf('## Keys per list'), doc.indexOf('\n## ', doc.indexOf('## Keys per list') + 1));
const rows = [...section.matchAll(/^\| `(\w+)` \| (.+?) \| (yes|no)\b.*? \| (.+) \|$/gm)].map((m) => ({
  list: m[1]!,
  keyFields: [...m[2]!.split(', per ')[0]!.matchAll(/`(\w+)`/g)].map((k) => k[1]!),
  codeUnique: m[3] === 'yes',
  join: [...m[4]!.matchAll(/`(\w+)`/g)].map((k) => k[1]!),
}));

describe('docs: keys per list', () => {
  it('names every list once, with the catalog key fields, and code unique exactly for one-field keys', () => {
    expect(rows.map((r) => r.list).sort()).toEqual(catalog.map((c) => c.key).sort());
    for (const def of catalog) {
      const row = rows.find((r) => r.list === def.key)!;
      expect(row.keyFields, def.key).toEqual(def.keyFields);
      expect(row.codeUnique, def.key).toBe(def.keyFields.length === 1);
      expect(row.join[0], def.key).toBe('environment');
      if (def.keyFields.length > 1) expect(row.join.slice(1), def.key).toEqual(def.keyFields);
    }
  });
});

// The error_code vocabulary is declared once (src/util/error-codes.ts): docs/reliability.md's table
// says the same, list failures are known by their base class, and the held codes are spelt nowhere else.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot as root, sourceFiles } from '../helpers/source-files.ts';
import { ViewDependencyError } from '../../src/columns/recorded-columns.ts';
import { DuplicateKeyError, EntryLimitError, EntryShapeError } from '../../src/sync/collect/collect.ts';
import { DataRefusedError, isListFailure } from '../../src/sync/outcome/failure.ts';
import { TargetDeadlineError } from '../../src/sync/sync-target.ts';
import { DeadlineError, ProtocolError } from '../../src/upstream/errors.ts';
import { errorCodeDescription, errorCodes, sqlstateCodes } from '../../src/util/error-codes.ts';

describe('the error_code vocabulary', () => {
  it("docs/reliability.md's table lists every code with the meaning declared", () => {
    const doc = readFileSync(join(root, 'docs/reliability.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### Error codes'));
    const rows = [...section.matchAll(/^\| `([^`]+)` \| (.+) \|$/gm)].map((m) => [m[1], m[2]]).filter(([code]) => code !== 'error_code');
    expect(rows).toEqual([...Object.entries(errorCodes), [sqlstateCodes.pattern, sqlstateCodes.meaning]]);
  });

  it('the published description names every code', () => {
    for (const code of [...Object.keys(errorCodes), sqlstateCodes.pattern]) expect(errorCodeDescription()).toContain(code);
  });

  it('list failures are known by their base class, whatever folder declares them', () => {
    const failures = [
      new ProtocolError('not JSON', { endpoint: '/x/' }),
      new DeadlineError('past its deadline', { endpoint: '/x/' }),
      new DuplicateKeyError('twice'),
      new EntryShapeError('not an object'),
      new EntryLimitError('too deep'),
      new DataRefusedError('shipment_modes', '22P05', 'unsupported Unicode escape sequence'),
      new TargetDeadlineError('past its deadline'),
      new ViewDependencyError('depends'),
    ];
    for (const failure of failures) {
      expect(isListFailure(failure), failure.constructor.name).toBe(true);
      expect(failure.code in errorCodes || failure.code.startsWith('sqlstate_'), failure.code).toBe(true);
    }
    expect(isListFailure(new Error('a bug'))).toBe(false);
  });

  it('the held codes are spelt only in the vocabulary', () => {
    const spelt = sourceFiles('src')
      .filter((f) => f !== 'src/util/error-codes.ts')
      .filter((f) => /'held_schema'|errorCode\s*(?:\?\?|:|=)\s*'held'/.test(readFileSync(join(root, f), 'utf8')));
    expect(spelt).toEqual([]);
  });
});

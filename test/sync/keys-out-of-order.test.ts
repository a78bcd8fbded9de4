// A large list whose keys come in order for longer than the content hash keeps their lines
// (tuning.hashKeepEntries), then one out of order: fetched once more and sorted from the first key,
// with the content hash of the plain definition (the same as with every line kept).
import { describe, expect, it } from 'vitest';
import { syncTarget, type PageSource } from '../../src/sync/sync-target.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { count, useGeneratedList } from './fixture.ts';

const t = useTestDatabase();
const at = useGeneratedList('accessorials', 4000);

/** The sandbox's list, counting the times it is fetched. */
function counted(): PageSource & { fetches: number } {
  return {
    fetches: 0,
    pages(request) {
      this.fetches += 1;
      return at.fx.client.pages(request);
    },
  };
}

describe('keys out of order after the hash let go of its kept lines', () => {
  it('fetches the list again and sorts every key; the hash is the one of every line kept', async () => {
    // Served after the 4,000 generated keys (G0000000...), this one sorts before all of them.
    at.sb.control.addEntry('accessorials', { id: 1, code: 'AAFIRST', description: 'served last', long_description: 'x', is_charge_code: false });
    const tuning = { hashKeepEntries: 1000, spillThreshold: 1000, indexAfterEntries: 500 };
    const source = counted();
    const first = await syncTarget(t.db, source, at.target, { runId: null, tuning });
    expect(first.status).toBe('changed');
    expect(source.fetches).toBe(2);
    expect(first.entryCount).toBe(4001);
    expect(await count(t.db, 'entries', "list_key = 'accessorials' and valid_to is null")).toBe(4001);
    // Every line kept (no limit): the same content hash, so nothing changed.
    const plain = counted();
    const again = await syncTarget(t.db, plain, at.target, { runId: null, tuning: { ...tuning, hashKeepEntries: Number.MAX_SAFE_INTEGER } });
    expect(again.status).toBe('unchanged');
    expect(plain.fetches).toBe(1);
  });
});

// The host goes away while the client holds a token (a worker between two runs, the sandbox stopped):
// each list's request fails on its own, its message naming its own path. The run still says the
// cause once: the messages differ by their request only, and are grouped without it.
import { describe, expect, it } from 'vitest';
import { failureLines } from '../../src/cli/output/sync-report.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { pipelineFixture } from './fixture.ts';

const t = useTestDatabase();

describe('the host gone with a token in hand', () => {
  it("every list's failure names its own request; the run's error and the sync report say their cause once", async () => {
    const sb = await useSandbox();
    const lists = ['shipment_modes', 'equipment_types', 'hazmat', 'piece_types'] as const;
    const fx = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'host-gone', REFSYNC_LISTS: lists.join(',') });
    try {
      expect((await fx.sync(t.db)).status).toBe('succeeded');
      await sb.close();
      const run = await fx.sync(t.db);
      expect(run.status).toBe('failed');
      // Each list's own message: its request, then what the connection did.
      const errors = run.outcomes.map((o) => o.error!);
      expect(new Set(errors).size).toBe(lists.length);
      for (const error of errors) expect(error).toMatch(/^GET \/v2\/shipments\/[a-z-]+\/ page 1: /);
      const cause = errors[0]!.replace(/^GET \S+ page 1: /, '');

      const { rows } = await t.db.query<{ error: string }>('select error from refdata.sync_runs where id = $1', [run.runId]);
      expect(rows[0]!.error).toBe(`${lists.length} of ${lists.length} targets did not sync: all ${lists.length} lists failed: ${cause}`);
      expect(failureLines(run)).toEqual([`failed      all ${lists.length} lists: ${cause}`]);
    } finally {
      await fx.client.close();
    }
  });
});

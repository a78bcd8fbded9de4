// In the worker: with one slot (REFSYNC_CONCURRENCY=1), a target whose upstream
// drips its body one byte at a time is failed at its deadline, naming it, and the slot goes on to
// the other lists; the run ends partial, the dripped list keeps its last good data.
import { beforeAll, describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { startTestWorker, workerConfig, testQueuePrefix } from '../queue/helpers.ts';
import { changeList, faultSource, SMALL_LISTS, workerProbes } from './harness.ts';
import { expectConsistentHistory, expectWholeStates } from './invariants.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});
const { runFinished } = workerProbes(() => ({ db: t.db, url: t.url }));

describe('a dripping upstream in the worker', () => {
  it.each([
    { setting: 'REFSYNC_REQUEST_DEADLINE_S', seconds: '2', names: /request deadline of 2 s \(REFSYNC_REQUEST_DEADLINE_S/ },
    { setting: 'REFSYNC_TARGET_DEADLINE_S', seconds: '3', names: /target deadline of 3 s \(REFSYNC_TARGET_DEADLINE_S/ },
  ])('$setting frees the only slot: the other lists sync, the run is partial', async ({ setting, seconds, names }) => {
    const fx = faultSource(sb, t.db);
    expect((await fx.sync()).status).toBe('succeeded');
    const before = fx.served();
    changeList(sb, 'piece_types');
    changeList(sb, 'equipment_types');
    const after = fx.served();
    const config = workerConfig(sb, t.url, {
      REFSYNC_ENVIRONMENT: fx.source.environment,
      REFSYNC_LISTS: SMALL_LISTS,
      REFSYNC_ALERT_ON: fx.source.alertOn.join(','),
      REFSYNC_CONCURRENCY: '1',
      [setting]: seconds,
    });
    const worker = await startTestWorker(config, testQueuePrefix());
    sb.control.setFaults({ drip: { list: 'piece_types', intervalMs: 200 } });
    try {
      const slot = `drip-${setting}`;
      await enqueueManualRuns(worker.queue, config.sources, { slot });
      const run = await runFinished(config.sources[0]!, slot, 'the run to finish', 60_000);
      expect(run.status).toBe('partial');
      const { rows } = await t.db.query<{ list_key: string; status: string; error: string | null }>(
        'select list_key, status, error from refdata.snapshots where run_id = $1 order by list_key',
        [run.id],
      );
      expect(rows.map((r) => [r.list_key, r.status])).toEqual([
        ['equipment_types', 'ok'],
        ['piece_types', 'failed'],
        ['shipment_modes', 'ok'],
      ]);
      expect(rows.find((r) => r.list_key === 'piece_types')?.error).toMatch(names);
    } finally {
      sb.control.clearFaults();
      await worker.close();
    }
    const matched = await expectWholeStates(t.db, fx.source, [before, after]);
    expect(matched.get('piece_types/')).toBe(0);
    expect(matched.get('equipment_types/')).toBe(1);
    await expectConsistentHistory(t.db, fx.source);
  });
});

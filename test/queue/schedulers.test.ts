import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, SANDBOX_MACHINE_ACCOUNT } from '../helpers/sandbox.ts';
import { queueSummary } from '../../src/queue/redis/summary.ts';
import { startTestWorker, testQueue, waitFor, workerConfig, testQueuePrefix } from './helpers.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const tdb = useTestDatabase();

describe('job schedulers', () => {
  it('repeated and concurrent worker starts leave exactly one scheduler per source', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const dir = testTempDir('refsync-sched');
    const file = join(dir, 'sources.json');
    const source = (name: string) => ({
      name,
      environment: `env-${name}`,
      baseUrl: sb.url,
      email: SANDBOX_MACHINE_ACCOUNT.email,
      password: SANDBOX_MACHINE_ACCOUNT.password,
      caFile: sb.caFile,
      schedule: '0 3 * * *',
      timezone: 'Europe/Berlin',
    });
    writeFileSync(file, JSON.stringify({ sources: [source('alpha'), source('beta')] }));
    const config = workerConfig(sb, tdb.url, { REFSYNC_CONFIG: file });

    for (let i = 0; i < 3; i++) await (await startTestWorker(config, prefix)).close();
    await Promise.all([startTestWorker(config, prefix), startTestWorker(config, prefix)]);

    const queue = testQueue(prefix);
    const schedulers = await queue.getJobSchedulers(0, -1, true);
    expect(schedulers.map((s) => s.id ?? s.key).sort()).toEqual(['source-alpha', 'source-beta']);
    expect(schedulers.every((s) => s.pattern === '0 3 * * *' && s.tz === 'Europe/Berlin')).toBe(true);
    // One planned job per scheduler, however many times it was upserted.
    const delayed = await queue.getDelayed();
    expect(delayed.map((j) => j.id!.replace(/:\d+$/, '')).sort()).toEqual(['repeat:source-alpha', 'repeat:source-beta']);

    // beta leaves the configuration: the next start removes its scheduler and keeps alpha's.
    writeFileSync(file, JSON.stringify({ sources: [source('alpha')] }));
    await (await startTestWorker(workerConfig(sb, tdb.url, { REFSYNC_CONFIG: file }), prefix)).close();
    expect((await queue.getJobSchedulers(0, -1, true)).map((s) => s.id ?? s.key)).toEqual(['source-alpha']);

    const summary = await queueSummary(config, { prefix });
    expect(summary.schedulers).toEqual([{ source: 'alpha', pattern: '0 3 * * *', tz: 'Europe/Berlin', next: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
    expect(summary.counts).toHaveProperty('delayed');
  });

  it('a short cron schedule syncs into Postgres, one run per slot', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const config = workerConfig(sb, tdb.url, {
      REFSYNC_ENVIRONMENT: 'cron-env',
      REFSYNC_SCHEDULE: '*/2 * * * * *',
      REFSYNC_LISTS: 'shipment_modes,equipment_types',
    });
    const worker = await startTestWorker(config, prefix);
    const run = await waitFor(async () => {
      const { rows } = await tdb.db.query<{ id: number; slot: string; trigger: string }>(
        "select id, slot, trigger from refdata.sync_runs where environment = 'cron-env' and status = 'succeeded' order by id limit 1",
      );
      return rows[0];
    }, 'a scheduled run to succeed');
    await worker.close();

    expect(run.trigger).toBe('schedule');
    expect(run.slot).toMatch(/^sched-\d+$/);
    // The slot is the instant the cron expression planned: a whole even second.
    expect(Number(run.slot.slice(6)) % 2000).toBe(0);
    const snapshots = await tdb.db.query<{ list_key: string; status: string }>(
      'select list_key, status from refdata.snapshots where run_id = $1 order by list_key',
      [run.id],
    );
    expect(snapshots.rows).toEqual([
      { list_key: 'equipment_types', status: 'ok' },
      { list_key: 'shipment_modes', status: 'ok' },
    ]);
    const entries = await tdb.db.query<{ n: number }>(
      "select count(*)::int as n from refdata.current_entries where environment = 'cron-env' and list_key = 'shipment_modes'",
    );
    expect(entries.rows[0]!.n).toBe(sb.control.getEntries('shipment_modes').length);
    const slots = await tdb.db.query<{ n: number; d: number }>(
      "select count(*)::int as n, count(distinct slot)::int as d from refdata.sync_runs where environment = 'cron-env'",
    );
    expect(slots.rows[0]!.n).toBe(slots.rows[0]!.d);
  });
});

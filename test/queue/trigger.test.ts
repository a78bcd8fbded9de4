import { describe, expect, inject, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.ts';
import { targetJobId } from '../../src/queue/redis/names.ts';
import { startWorkerService } from '../../src/queue/worker/service.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { freePort, runCli, startRedisServer, startTestWorker, testQueue, waitFor, workerConfig, testQueuePrefix } from './helpers.ts';

const tdb = useTestDatabase();

async function runOf(environment: string, slot: string) {
  const { rows } = await tdb.db.query<{ id: number; status: string; trigger: string; targets_total: number }>(
    'select id, status, trigger, targets_total from refdata.sync_runs where environment = $1 and slot = $2',
    [environment, slot],
  );
  return rows;
}

describe('refsync trigger', () => {
  it('--accept-removals applies a list the last run held, as sync --accept-removals does', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const extra = { REFSYNC_ENVIRONMENT: 'accept-env', REFSYNC_LISTS: 'accessorials', REFSYNC_ALERT_ON: 'held,run_completed' };
    // Large (past 5,000 entries): its run job leaves it to a target job, which reports its progress.
    sb.control.setGenerated('accessorials', 6000);
    await startTestWorker(workerConfig(sb, tdb.url, extra), prefix);
    const env = { ...sandboxEnv(sb, extra), REDIS_URL: inject('redisUrl'), REFSYNC_QUEUE_PREFIX: prefix };
    const lastSnapshot = async (slot: string) => {
      await waitFor(async () => (await runOf('accept-env', slot))[0]?.status.match(/succeeded|failed|partial/), `run ${slot}`);
      const { rows } = await tdb.db.query<{ status: string; entry_count: number }>(
        `select s.status, s.entry_count from refdata.snapshots s join refdata.sync_runs r on r.id = s.run_id
          where r.environment = 'accept-env' and r.slot = $1`,
        [slot],
      );
      return rows[0];
    };
    expect((await runCli(['trigger', '--slot', 'first'], env)).code).toBe(0);
    expect(await lastSnapshot('first')).toMatchObject({ status: 'ok' });
    // The target job reported its fetch to BullMQ (what the dashboard shows), ending at 100%.
    const served = sb.control.getEntries('accessorials').length;
    const job = await testQueue(prefix).getJob(targetJobId('accept-env', 'accessorials', '', 'first'));
    expect(job?.progress).toMatchObject({ entries: served, totalEntries: served, percent: 100 });
    const [keep] = sb.control.getEntries('accessorials') as Array<Record<string, unknown>>;
    sb.control.setEntries('accessorials', [keep!]);
    expect((await runCli(['trigger', '--slot', 'held'], env)).code).toBe(0);
    expect(await lastSnapshot('held')).toMatchObject({ status: 'held' });
    const accepted = await runCli(['trigger', '--slot', 'accepted', '--accept-removals'], env);
    expect(accepted).toMatchObject({ code: 0, stderr: '' });
    expect(await lastSnapshot('accepted')).toMatchObject({ status: 'ok', entry_count: 1 });
    const { rows } = await tdb.db.query<{ n: number }>("select count(*)::int as n from refdata.accessorials where environment = 'accept-env'");
    expect(rows[0]!.n).toBe(1);
    // The worker tells each run's end too (run_completed, opted in above), with the list's outcome.
    const { rows: alerts } = await tdb.db.query<{ kind: string; status: string; list_status: string }>(
      `select kind, payload ->> 'status' as status, payload #>> '{lists,0,status}' as list_status
         from refdata.alerts where environment = 'accept-env' order by id`,
    );
    expect(alerts).toEqual([
      { kind: 'run_completed', status: 'succeeded', list_status: 'changed' },
      { kind: 'held', status: null, list_status: null },
      { kind: 'run_completed', status: 'failed', list_status: 'held' },
      { kind: 'run_completed', status: 'succeeded', list_status: 'changed' },
    ]);
  }, 60_000);

  it('--list KEY --accept-schema applies a list its schema policy held, once', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const extra = { REFSYNC_ENVIRONMENT: 'schema-env', REFSYNC_LISTS: 'hazmat', REFSYNC_SCHEMA_CHANGES: 'freeze', REFSYNC_ALERT_ON: 'held' };
    await startTestWorker(workerConfig(sb, tdb.url, extra), prefix);
    const env = { ...sandboxEnv(sb, extra), REDIS_URL: inject('redisUrl'), REFSYNC_QUEUE_PREFIX: prefix };
    const snapshotOf = async (slot: string) => {
      await waitFor(async () => (await runOf('schema-env', slot))[0]?.status.match(/succeeded|failed|partial/), `run ${slot}`);
      const { rows } = await tdb.db.query<{ status: string; error_code: string | null; schema_accepted: boolean }>(
        `select s.status, s.error_code, s.schema_accepted from refdata.snapshots s join refdata.sync_runs r on r.id = s.run_id
          where r.environment = 'schema-env' and r.slot = $1`,
        [slot],
      );
      return rows[0];
    };
    expect((await runCli(['trigger', '--slot', 'first'], env)).code).toBe(0);
    expect(await snapshotOf('first')).toMatchObject({ status: 'ok' });
    sb.control.addField('hazmat', 'is_marine_pollutant', false);
    expect((await runCli(['trigger', '--slot', 'held'], env)).code).toBe(0);
    expect(await snapshotOf('held')).toMatchObject({ status: 'held', error_code: 'held_schema' });
    const accepted = await runCli(['trigger', '--list', 'hazmat', '--slot', 'accepted', '--accept-schema'], env);
    expect(accepted).toMatchObject({ code: 0, stderr: '' });
    expect(await snapshotOf('accepted')).toMatchObject({ status: 'ok', schema_accepted: true });
  }, 60_000);

  it('enqueues a manual run that a running worker syncs; the same slot twice runs each target once', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const extra = { REFSYNC_ENVIRONMENT: 'trigger-env', REFSYNC_LISTS: 'shipment_modes,equipment_types,accessorials' };
    await startTestWorker(workerConfig(sb, tdb.url, extra), prefix);
    const env = { ...sandboxEnv(sb, extra), REDIS_URL: inject('redisUrl'), REFSYNC_QUEUE_PREFIX: prefix };

    const first = await runCli(['trigger', '--list', 'shipment_modes', '--list', 'equipment_types'], env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const slot = /slot (manual-\S+) \(job/.exec(first.stdout)?.[1];
    expect(slot).toBeDefined();
    const [run] = await waitFor(async () => {
      const rows = await runOf('trigger-env', slot!);
      return rows[0]?.status === 'succeeded' && rows;
    }, 'the triggered run');
    expect(run).toMatchObject({ trigger: 'manual', targets_total: 2 });

    // Two triggers for one slot, at once: one run record, each target fetched and recorded once.
    sb.control.resetRequestLog();
    const [a, b] = await Promise.all([runCli(['trigger', '--slot', 'deploy-42'], env), runCli(['trigger', '--slot', 'deploy-42'], env)]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const [again] = await waitFor(async () => {
      const rows = await runOf('trigger-env', 'deploy-42');
      return rows[0]?.status === 'succeeded' && rows;
    }, 'the run of slot deploy-42');
    // A third trigger of a finished slot changes nothing.
    expect((await runCli(['trigger', '--slot', 'deploy-42'], env)).code).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    expect(await runOf('trigger-env', 'deploy-42')).toHaveLength(1);
    const perTarget = await tdb.db.query<{ list_key: string; n: number }>(
      'select list_key, count(*)::int as n from refdata.snapshots where run_id = $1 group by list_key order by list_key',
      [again!.id],
    );
    expect(perTarget.rows).toEqual([
      { list_key: 'accessorials', n: 1 },
      { list_key: 'equipment_types', n: 1 },
      { list_key: 'shipment_modes', n: 1 },
    ]);
    const fetches = sb.control.requestLog().filter((r) => r.path.includes('shipment-modes'));
    expect(fetches).toHaveLength(1);
  });

  it('fails fast with one line when Redis is down, and refuses an unknown list', async () => {
    const sb = await useSandbox();
    const down = await runCli(['trigger'], { ...sandboxEnv(sb), REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    expect(down.code).toBe(1);
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
    expect(down.stderr).toMatch(/^refsync: Redis at 127\.0\.0\.1:\d+ is not reachable/);

    const bad = await runCli(['trigger', '--list', 'nope'], { ...sandboxEnv(sb), REDIS_URL: inject('redisUrl') });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^refsync: trigger: --list 'nope' is not a list key/);
  });

  it('refuses a Redis that may evict keys (allkeys-lru), naming the policy', async () => {
    const sb = await useSandbox();
    const redis = await startRedisServer(['--maxmemory-policy', 'allkeys-lru']);
    const res = await runCli(['trigger'], { ...sandboxEnv(sb), REDIS_URL: redis.url });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/maxmemory-policy 'allkeys-lru'; refsync needs 'noeviction'/);

    const config = workerConfig(sb, tdb.url, { REDIS_URL: redis.url });
    const started = startWorkerService(config, { logger: silentLogger, prefix: testQueuePrefix(), alerts: false });
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(/noeviction/);
  });
});

describe('failures', () => {
  it('a failure retrying cannot heal is recorded at once and the job fails without retries', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const extra = { REFSYNC_ENVIRONMENT: 'dup-env', REFSYNC_LISTS: 'shipment_modes,equipment_types' };
    const worker = await startTestWorker(workerConfig(sb, tdb.url, extra), prefix);
    sb.control.setFaults({ duplicateKey: { list: 'shipment_modes', mode: 'conflicting' } });
    const [queued] = await (await import('../../src/queue/jobs.ts')).enqueueManualRuns(worker.queue, workerConfig(sb, tdb.url, extra).sources, {
      slot: 'dup-1',
    });
    expect(queued!.added).toBe(true);
    const [run] = await waitFor(async () => {
      const rows = await runOf('dup-env', 'dup-1');
      return rows[0] && rows[0].status !== 'running' && rows;
    }, 'the run to close');
    expect(run!.status).toBe('partial');
    const snaps = await tdb.db.query<{ list_key: string; status: string; error_code: string | null }>(
      'select list_key, status, error_code from refdata.snapshots where run_id = $1 order by list_key',
      [run!.id],
    );
    expect(snaps.rows).toEqual([
      { list_key: 'equipment_types', status: 'ok', error_code: null },
      { list_key: 'shipment_modes', status: 'failed', error_code: expect.any(String) },
    ]);
    // The run is closed from inside the job, just before BullMQ marks the job failed: wait for that.
    const job = await testQueue(prefix).getJob('target~dup-env~shipment_modes~~dup-1');
    await waitFor(async () => (await job!.getState()) === 'failed', 'the job to be marked failed');
    expect((await testQueue(prefix).getJob('target~dup-env~shipment_modes~~dup-1'))!.attemptsMade).toBe(1);
  });

  it('a 429 the client gave up on puts the job back (its source cools down) and the target syncs later, with no failure recorded', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const extra = { REFSYNC_ENVIRONMENT: 'rl-env', REFSYNC_LISTS: 'shipment_modes' };
    const config = workerConfig(sb, tdb.url, extra);
    const worker = await startTestWorker(config, prefix);
    // The test client tries twice, so the first job attempt gives up on two 429s.
    sb.control.setFaults({ rateLimit: { count: 2, retryAfter: '1' }, paths: ['shipment_modes'] });
    await (await import('../../src/queue/jobs.ts')).enqueueManualRuns(worker.queue, config.sources, { slot: 'rl-1' });
    const [run] = await waitFor(async () => {
      const rows = await runOf('rl-env', 'rl-1');
      return rows[0] && rows[0].status !== 'running' && rows;
    }, 'the rate-limited run to close');
    expect(run!.status).toBe('succeeded');
    const statuses = sb.control
      .requestLog()
      .filter((r) => r.path.includes('shipment-modes'))
      .map((r) => r.status);
    expect(statuses).toEqual([429, 429, 200]);
    const job = await testQueue(prefix).getJob('target~rl-env~shipment_modes~~rl-1');
    // Started twice, but only the successful attempt counts: the 429 put it back without using
    // an attempt (a retry would have counted two) and left no error on it.
    expect(job!.attemptsStarted).toBe(2);
    expect(job!.attemptsMade).toBe(1);
    expect(job!.stacktrace).toEqual([]);
    const failed = await tdb.db.query("select 1 from refdata.snapshots where environment = 'rl-env' and status <> 'ok'");
    expect(failed.rows).toEqual([]);
  });
});

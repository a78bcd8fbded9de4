import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { AppConfig } from '../../src/config/types.ts';
import { createUnmigratedDatabase, dropTestDatabase, useTestDatabase } from '../helpers/db.ts';
import { alertsOf, drainWithTestDispatcher, sleep, testDispatcher, useAlertFixtures, VERSION, webhookEnv } from './fixture.ts';
import { startReceiver } from './receiver.ts';

const t = useTestDatabase();
const bin = fileURLToPath(new URL('../../bin/refsync.js', import.meta.url));
const files = useAlertFixtures(t, 'X');
const { fixture } = files;
const addCode = (description = 'Outbox test code') => files.addCode(description);

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, 'alerts', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

async function waitFor(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await sleep(20);
  }
}

describe('the pipeline writes the outbox', () => {
  it('a baseline writes no alert; a change writes one row per kind per snapshot, as REFSYNC_ALERT_ON says', async () => {
    const fx = fixture({ REFSYNC_ALERT_ON: 'added,removed,modified' });
    await fx.sync();
    expect(await alertsOf(t.db, fx.source.environment)).toEqual([]);
    addCode();
    addCode();
    const current = files.sandbox().control.getEntries('charge_codes', { version: VERSION }) as Array<{ code: string }>;
    files.sandbox().control.modifyEntry('charge_codes', current[0]!.code, { description: 'Reworded for the outbox test' }, { version: VERSION });
    await fx.sync();
    const rows = await alertsOf(t.db, fx.source.environment);
    expect(rows.map((r) => [r.kind, r.state, r.payload.count])).toEqual([
      ['added', 'pending', 2],
      ['modified', 'pending', 1],
    ]);
    files
      .sandbox()
      .control.modifyEntry('charge_codes', current[0]!.code, { description: (current[0] as { description?: string }).description ?? '' }, { version: VERSION });
  });

  it('no row when the kind is not in REFSYNC_ALERT_ON, or the list is not in REFSYNC_ALERT_LISTS', async () => {
    const noAdded = fixture({ REFSYNC_ALERT_ON: 'removed,failed' });
    const otherList = fixture({ REFSYNC_ALERT_LISTS: 'accessorials' });
    await noAdded.sync();
    await otherList.sync();
    addCode();
    await noAdded.sync();
    await otherList.sync();
    expect(await alertsOf(t.db, noAdded.source.environment)).toEqual([]);
    expect(await alertsOf(t.db, otherList.source.environment)).toEqual([]);
  });

  it('a LISTEN client receives NOTIFY refdata_changes after a change is committed', async () => {
    const fx = fixture();
    await fx.sync();
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    try {
      const notices: Array<Record<string, unknown>> = [];
      client.on('notification', (n) => {
        if (n.channel === 'refdata_changes' && n.payload) notices.push(JSON.parse(n.payload) as Record<string, unknown>);
      });
      await client.query('LISTEN refdata_changes');
      addCode();
      await fx.sync();
      await waitFor(() => notices.some((n) => n.environment === fx.source.environment));
      expect(notices.find((n) => n.environment === fx.source.environment)).toMatchObject({
        list_key: 'charge_codes',
        variant: VERSION,
        added: 1,
        removed: 0,
        modified: 0,
      });
    } finally {
      await client.end();
    }
  });
});

describe('run_completed', () => {
  it('is off by default; opted in, each finished run gives one alert with its per-list counts, delivered like the others', async () => {
    const off = fixture();
    await off.sync();
    expect((await alertsOf(t.db, off.source.environment)).map((a) => a.kind)).toEqual([]);

    const receiver = await startReceiver();
    const fx = fixture(webhookEnv(receiver, { REFSYNC_ALERT_ON: 'added,run_completed', REFSYNC_WEBHOOK_FORMAT: 'slack' }));
    await fx.sync();
    const code = addCode();
    await fx.sync();
    const rows = await alertsOf(t.db, fx.source.environment);
    expect(rows.map((a) => a.kind)).toEqual(['run_completed', 'added', 'run_completed']);
    const { rows: runs } = await t.db.query<{ id: number }>('select id from refdata.sync_runs where environment = $1 order by id', [fx.source.environment]);
    expect(rows[2]!.payload).toMatchObject({
      run_id: Number(runs[1]!.id),
      source: fx.source.name,
      environment: fx.source.environment,
      trigger: 'cli',
      status: 'succeeded',
      targets_total: 1,
      targets_done: 1,
      targets_failed: 0,
      lists: [{ list_key: 'charge_codes', variant: VERSION, status: 'changed', added: 1, removed: 0, modified: 0 }],
    });
    expect(rows[0]!.payload).toMatchObject({ lists: [{ status: 'changed' }] });
    const { rows: subjects } = await t.db.query<{ run_id: number | null; snapshot_id: number | null }>(
      "select run_id, snapshot_id from refdata.alerts where environment = $1 and kind = 'run_completed'",
      [fx.source.environment],
    );
    expect(subjects.map((r) => [Number(r.run_id), r.snapshot_id])).toEqual(runs.map((r) => [Number(r.id), null]));

    expect(await drainWithTestDispatcher(t.db, fx.config, receiver.caPem)).toMatchObject({ delivered: 3, failed: 0 });
    const texts = receiver.requests.map((r) => (JSON.parse(r.body) as { text: string }).text);
    expect(texts).toContain(`:checkered_flag: run ${runs[1]!.id} of ${fx.source.name} (${fx.source.environment}) succeeded: 1 of 1 lists (1 changed)`);
    expect(texts.some((text) => text.includes(code))).toBe(true);
  });

  it('NOTIFY refdata_runs tells every finished run, with its outcome and lists', async () => {
    const fx = fixture();
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    try {
      const notices: Array<Record<string, unknown>> = [];
      client.on('notification', (n) => {
        if (n.channel === 'refdata_runs' && n.payload) notices.push(JSON.parse(n.payload) as Record<string, unknown>);
      });
      await client.query('LISTEN refdata_runs');
      await fx.sync();
      await waitFor(() => notices.some((n) => n.environment === fx.source.environment));
      expect(notices.find((n) => n.environment === fx.source.environment)).toMatchObject({
        source: fx.source.name,
        status: 'succeeded',
        targets_total: 1,
        lists: [{ list_key: 'charge_codes', variant: VERSION, status: 'changed' }],
      });
    } finally {
      await client.end();
    }
  });
});

describe('the dispatcher', () => {
  it('delivers after a restart what a killed process committed but never sent, once', async () => {
    const receiver = await startReceiver();
    const fx = fixture(webhookEnv(receiver));
    await fx.sync();
    addCode();
    // The "killed" process: the sync committed; no dispatcher ever ran.
    await fx.sync();
    const restarted = testDispatcher(t.db, fx.config, receiver.caPem);
    try {
      expect(await restarted.drainOnce()).toMatchObject({ delivered: 1 });
      expect(await restarted.drainOnce()).toMatchObject({ delivered: 0 });
    } finally {
      await restarted.stop();
    }
    expect(receiver.requests).toHaveLength(1);
  });

  it('an alert claimed by a process that died mid-delivery is sent again once its lease runs out', async () => {
    const receiver = await startReceiver();
    const fx = fixture(webhookEnv(receiver));
    await fx.sync();
    addCode();
    await fx.sync();
    // What a claim leaves behind: an attempt counted and a lease in the future.
    await t.db.query("update refdata.alerts set attempts = 1, next_attempt_at = now() + interval '5 minutes' where environment = $1", [fx.source.environment]);
    const dispatcher = testDispatcher(t.db, fx.config, receiver.caPem);
    try {
      expect(await dispatcher.drainOnce()).toMatchObject({ delivered: 0 });
      expect(receiver.requests).toHaveLength(0);
      // The lease runs out on the database's clock (the dispatcher schedules on it).
      await t.db.query("update refdata.alerts set next_attempt_at = now() - interval '1 second' where environment = $1", [fx.source.environment]);
      expect(await dispatcher.drainOnce()).toMatchObject({ delivered: 1 });
    } finally {
      await dispatcher.stop();
    }
    expect(receiver.requests).toHaveLength(1);
    expect((await alertsOf(t.db, fx.source.environment))[0]).toMatchObject({ state: 'delivered', attempts: 2 });
  });

  it('two dispatchers draining at once deliver each alert exactly once (SKIP LOCKED)', async () => {
    const receiver = await startReceiver();
    receiver.delayMs = 15;
    const a = fixture(webhookEnv(receiver, { REFSYNC_ALERT_ON: 'added,modified' }));
    const b = fixture(webhookEnv(receiver, { REFSYNC_ALERT_ON: 'added,modified' }));
    await a.sync();
    await b.sync();
    addCode();
    const current = files.sandbox().control.getEntries('charge_codes', { version: VERSION }) as Array<{ code: string; description: string }>;
    const target = current[1]!;
    files.sandbox().control.modifyEntry('charge_codes', target.code, { description: 'Temporarily reworded' }, { version: VERSION });
    await a.sync();
    await b.sync();
    files.sandbox().control.modifyEntry('charge_codes', target.code, { description: target.description }, { version: VERSION });
    const config: AppConfig = { ...a.config, sources: [a.source, b.source] };
    const expected = (await alertsOf(t.db, a.source.environment)).length + (await alertsOf(t.db, b.source.environment)).length;
    expect(expected).toBe(4);

    const one = testDispatcher(t.db, config, receiver.caPem, { batchSize: 1 });
    const two = testDispatcher(t.db, config, receiver.caPem, { batchSize: 1 });
    try {
      const [r1, r2] = await Promise.all([one.drainOnce(), two.drainOnce()]);
      expect(r1.delivered + r2.delivered).toBe(expected);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
    const ids = receiver.requests.map((r) => String(r.headers['webhook-id']));
    expect(ids).toHaveLength(expected);
    expect(new Set(ids).size).toBe(expected);
  });

  /**
   * A started dispatcher that LISTENs and polls only every ten minutes, so that within a test only
   * a NOTIFY can wake it; returned once its first drain (on start) has gone to sleep.
   */
  async function listeningDispatcher(config: AppConfig, ca: string) {
    const dispatcher = testDispatcher(t.db, config, ca, { listen: true, pollIntervalMs: 10 * 60_000 });
    dispatcher.start();
    await sleep(200);
    return dispatcher;
  }

  it('start(): a NOTIFY wakes the dispatcher, long before its poll interval', async () => {
    const receiver = await startReceiver();
    const fx = fixture(webhookEnv(receiver));
    await fx.sync();
    const dispatcher = await listeningDispatcher({ ...fx.config, databaseUrl: t.url }, receiver.caPem);
    try {
      addCode();
      await fx.sync();
      await waitFor(() => receiver.requests.length === 1);
      await waitFor(async () => (await alertsOf(t.db, fx.source.environment))[0]?.state === 'delivered');
    } finally {
      await dispatcher.stop();
      await dispatcher.stop();
    }
    expect(receiver.requests).toHaveLength(1);
  });
  // Behind a transaction-mode pooler DATABASE_URL cannot carry a LISTEN: REFSYNC_LISTEN_DATABASE_URL
  // names the direct connection it uses instead (here DATABASE_URL points at nothing at all).
  it('start(): LISTENs on listenDatabaseUrl when it is set, not on DATABASE_URL', async () => {
    const receiver = await startReceiver();
    const fx = fixture(webhookEnv(receiver));
    await fx.sync();
    const nowhere = new URL(t.url);
    nowhere.port = '1';
    const dispatcher = await listeningDispatcher({ ...fx.config, databaseUrl: nowhere.toString(), listenDatabaseUrl: t.url }, receiver.caPem);
    try {
      addCode();
      await fx.sync();
      await waitFor(() => receiver.requests.length === 1);
    } finally {
      await dispatcher.stop();
    }
  });
  it('start(): a failed list (no refdata_changes) wakes it through NOTIFY refdata_alerts', async () => {
    const receiver = await startReceiver();
    const fx = fixture(webhookEnv(receiver));
    await fx.sync();
    const dispatcher = await listeningDispatcher({ ...fx.config, databaseUrl: t.url }, receiver.caPem);
    try {
      files.sandbox().control.setFaults({ errorCount: 10, paths: ['charge_codes'] });
      try {
        await fx.sync();
      } finally {
        files.sandbox().control.clearFaults();
      }
      await waitFor(() => receiver.requests.length === 1);
    } finally {
      await dispatcher.stop();
    }
    expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({ type: 'refdata.failed', data: { kind: 'failed', list_key: 'charge_codes' } });
  });
});

describe('refsync alerts (CLI)', () => {
  it('lists alerts as JSON and as a table; requeues a dead one and a disabled one (re-enabling its endpoint)', async () => {
    const receiver = await startReceiver();
    const fx = fixture(webhookEnv(receiver));
    await fx.sync();
    const code = addCode('Listed by the CLI');
    await fx.sync();
    receiver.respond = () => ({ status: 500, body: 'down' });
    expect(await drainWithTestDispatcher(t.db, fx.config, receiver.caPem, { retry: { baseDelayMs: 1, maxDelayMs: 1, maxAttempts: 1 } })).toMatchObject({
      dead: 1,
    });
    const [row] = await alertsOf(t.db, fx.source.environment);
    const env = { DATABASE_URL: t.url };

    const listed = await cli(['--json', '--limit', '1000'], env);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const items = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
    expect(items.find((i) => i.id === row!.id)).toMatchObject({
      kind: 'added',
      environment: fx.source.environment,
      listKey: 'charge_codes',
      variant: VERSION,
      state: 'dead',
      attempts: 1,
      lastError: 'gave up after 1 attempts: HTTP 500: down',
      summary: code,
    });

    const table = await cli([], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`${row!.id}\\s.*added\\s+${fx.source.environment}/charge_codes/${VERSION}\\s+dead\\s+1\\s+${code}`));

    const retried = await cli(['retry', String(row!.id)], env);
    expect(retried).toMatchObject({ code: 0, stdout: `alert ${row!.id} requeued (was dead)\n` });
    const pending = JSON.parse((await cli(['--pending', '--json'], env)).stdout) as Array<Record<string, unknown>>;
    expect(pending.find((i) => i.id === row!.id)).toMatchObject({ state: 'pending', attempts: 0 });

    // A requeued alert gets a fresh retry budget, even when it was created days ago.
    await t.db.query("update refdata.alerts set created_at = now() - interval '2 days' where id = $1", [row!.id]);
    const old = testDispatcher(t.db, fx.config, receiver.caPem);
    try {
      expect(await old.drainOnce()).toMatchObject({ failed: 1, dead: 0 });
    } finally {
      await old.stop();
    }
    expect((await alertsOf(t.db, fx.source.environment))[0]).toMatchObject({ state: 'pending', attempts: 1 });
    await t.db.query('update refdata.alerts set next_attempt_at = now() where id = $1', [row!.id]);

    // Now the endpoint is gone: 410 disables it; retrying the alert re-enables the endpoint.
    receiver.respond = () => ({ status: 410 });
    const again = testDispatcher(t.db, fx.config, receiver.caPem);
    try {
      expect(await again.drainOnce()).toMatchObject({ disabled: 1 });
      const disabled = await cli(['retry', String(row!.id)], { ...fx.env, DATABASE_URL: t.url });
      expect(disabled.stderr).toBe('');
      expect(disabled.stdout).toMatch(/webhook endpoint https:\/\/localhost:\d+\/…#[0-9a-f]+ re-enabled\n/);
      expect(disabled.stdout).toContain(`alert ${row!.id} requeued (was disabled)`);
      receiver.respond = () => ({ status: 204 });
      expect(await again.drainOnce()).toMatchObject({ delivered: 1 });
    } finally {
      await again.stop();
    }
    expect((await alertsOf(t.db, fx.source.environment))[0]).toMatchObject({ state: 'delivered' });
  }, 120_000);

  it('refuses what it cannot do: bad arguments, an unknown alert among them, exit 2; missing tables say migrate', async () => {
    const env = { DATABASE_URL: t.url };
    const bad = [['--bogus'], ['retry'], ['retry', 'abc'], ['frobnicate'], ['--limit', '0']];
    const results = await Promise.all(bad.map((args) => cli(args, env)));
    results.forEach((r, i) => {
      expect(r.code, bad[i]!.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^refsync: alerts( retry)?: [^\n]+\n$/);
    });
    const missing = await cli(['retry', '999999999'], env);
    expect(missing).toMatchObject({ code: 2, stderr: 'refsync: alerts retry: alert 999999999 does not exist\n' });

    const empty = await createUnmigratedDatabase('refsync_t_empty');
    try {
      const r = await cli([], { DATABASE_URL: empty.url });
      expect(r).toMatchObject({ code: 2, stderr: 'refsync: DATABASE_URL: schema refdata is missing; run `refsync migrate` first\n' });
    } finally {
      await dropTestDatabase(empty.name);
    }
  }, 120_000);
});

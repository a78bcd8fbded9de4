// Values real services emit and Postgres cannot store as they are: NUL and lone
// surrogates are stored as U+FFFD and the list syncs; numbers keep every digit; entries past a
// limit, and data Postgres refuses, fail their own list only, recorded and never retried.
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { getListDefinition } from '../../src/catalog/catalog.ts';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import type { SandboxFaults } from '../../src/sandbox/types.ts';
import { normalizeEntry } from '../../src/sync/collect/collect.ts';
import { runCli } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { startTestWorker, testQueue, waitFor, workerConfig, testQueuePrefix } from '../queue/helpers.ts';
import { changeList, expectFailedThenRecovered, expectRerunAddsNothing, faultSource, fileLogs, type FaultSource } from './harness.ts';
import { everySandboxTarget } from '../helpers/targets.ts';

const t = useTestDatabase();
let sb: Sandbox;

beforeAll(async () => {
  sb = await useSandbox();
});
afterEach(() => {
  sb.control.clearFaults();
  sb.control.reset();
});

const LIST = 'shipment_modes';

/** The key of the entry the badValue fault changes: the list's first. */
function firstKey(): string {
  return normalizeEntry(getListDefinition(LIST), sb.control.getEntries(LIST)[0], 0).entryKey;
}

async function storedRow(fx: FaultSource, entryKey: string) {
  const { rows } = await t.db.query<{ code: string; description: string; payload: string; remark: string | null }>(
    `select code, description, payload::text as payload, payload->>'remark' as remark from refdata.entries
     where environment = $1 and list_key = $2 and entry_key = $3 and valid_to is null`,
    [fx.source.environment, LIST, entryKey],
  );
  expect(rows, `one current row for ${entryKey}`).toHaveLength(1);
  return rows[0]!;
}

async function snapshot(id: number | undefined) {
  const { rows } = await t.db.query<{ status: string; error: string | null; error_code: string | null; replaced_values: number }>(
    'select status, error, error_code, replaced_values from refdata.snapshots where id = $1',
    [id],
  );
  return rows[0]!;
}

/** Plants the fault after a clean first sync, syncs, and expects every list synced. */
async function syncWith(faults: SandboxFaults) {
  const fx = faultSource(sb, t.db);
  await fx.sync();
  sb.control.setFaults(faults);
  const run = await fx.sync();
  expect(run.status, run.outcomes.map((o) => o.error).join('; ')).toBe('succeeded');
  const outcome = fx.outcome(run, LIST);
  // The fault puts a field into one entry that no other entry has: a field that appeared in the list, so a reshape.
  expect(outcome.counts.modified + outcome.counts.reshaped).toBe(1);
  return { fx, outcome, key: firstKey() };
}

describe('text Postgres cannot store is stored with U+FFFD, and the list syncs', () => {
  it('NUL in a description: description, payload and the change row hold U+FFFD; counted, logged once, stable', async () => {
    const logged = fileLogs.lines.length;
    const { fx, outcome, key } = await syncWith({ badValue: { list: LIST, kind: 'nul', field: 'description' } });
    const row = await storedRow(fx, key);
    expect(row.description).toBe('before\ufffdafter');
    expect(JSON.parse(row.payload).description).toBe('before\ufffdafter');
    expect((await snapshot(outcome.snapshotId)).replaced_values).toBe(1);
    const change = await t.db.query<{ after: string }>(
      "select after->>'description' as after from refdata.entry_changes where snapshot_id = $1 and entry_key = $2",
      [outcome.snapshotId, key],
    );
    expect(change.rows).toEqual([{ after: 'before\ufffdafter' }]);
    const lines = fileLogs.lines.slice(logged).filter((l) => l.includes('U+FFFD'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ target: `${LIST}:`, replacedValues: 1, entries: [key] });
    await expectRerunAddsNothing(t.db, fx);
  });

  it('a lone surrogate in a value and in a nested key', async () => {
    const { fx, key } = await syncWith({ badValue: { list: LIST, kind: 'surrogate' } });
    expect((await storedRow(fx, key)).remark).toBe('lone \ufffd surrogate');
    await expectRerunAddsNothing(t.db, fx);
    sb.control.setFaults({ badValue: { list: LIST, kind: 'surrogateKey' } });
    const run = await fx.sync();
    expect(run.status).toBe('succeeded');
    expect(JSON.parse((await storedRow(fx, key)).payload).remark).toEqual({ 'key \ufffd lone': 'value' });
    expect((await snapshot(fx.outcome(run, LIST).snapshotId)).replaced_values).toBe(1);
    await expectRerunAddsNothing(t.db, fx);
  });

  it('NUL in the entry key: the key, code and hash all see U+FFFD', async () => {
    const fx = faultSource(sb, t.db);
    sb.control.addEntry(LIST, { code: 'NUL\u0000KEY', description: 'a key with a NUL' });
    const run = await fx.sync();
    expect(run.status).toBe('succeeded');
    const row = await storedRow(fx, 'NUL\ufffdKEY');
    expect(row.code).toBe('NUL\ufffdKEY');
    await expectRerunAddsNothing(t.db, fx);
  });
});

describe('numbers are kept as served', () => {
  it('integers past 2^53, long decimals and out-of-range exponents keep every digit; the 17th digit is a change', async () => {
    const { fx, key } = await syncWith({ badValue: { list: LIST, kind: 'bigNumbers' } });
    const { rows } = await t.db.query<Record<string, string | boolean>>(
      `select payload->'remark'->>'big' as big, payload->'remark'->>'negative' as negative,
              payload->'remark'->>'decimal' as decimal, (payload->'remark'->>'huge')::numeric = 1e400 as huge,
              (payload->'remark'->>'tiny')::numeric = 1e-400 as tiny, payload->'remark'->>'plain' as plain
       from refdata.entries where environment = $1 and list_key = $2 and entry_key = $3 and valid_to is null`,
      [fx.source.environment, LIST, key],
    );
    expect(rows[0]).toEqual({
      big: '12345678901234567891',
      negative: '-98765432109876543210',
      decimal: '0.1000000000000000055511151231257827',
      huge: true,
      tiny: true,
      plain: '1.5',
    });
    await expectRerunAddsNothing(t.db, fx);

    sb.control.setFaults({ badValue: { list: LIST, json: '{"big":12345678901234567892}' } });
    const run = await fx.sync();
    expect(fx.outcome(run, LIST).counts).toMatchObject({ modified: 1, added: 0, removed: 0 });
    expect(JSON.parse((await storedRow(fx, key)).payload).remark).toBeTypeOf('object');
  });

  it('a big number as the code is the entry key as served', async () => {
    const fx = faultSource(sb, t.db);
    sb.control.setFaults({ badValue: { list: LIST, field: 'code', json: '12345678901234567891' } });
    const run = await fx.sync();
    expect(run.status).toBe('succeeded');
    expect((await storedRow(fx, '12345678901234567891')).code).toBe('12345678901234567891');
    const { rows } = await t.db.query<{ fields: string[] }>('select fields from refdata.snapshots where id = $1', [fx.outcome(run, LIST).snapshotId]);
    expect(rows[0]!.fields).toContain('code:number|string');
    await expectRerunAddsNothing(t.db, fx);
  });
});

describe('limits: within them the list syncs', () => {
  it('a string of 1,000,000 characters is accepted and stored whole', async () => {
    const { fx, key } = await syncWith({ badValue: { list: LIST, kind: 'longString' } });
    expect((await storedRow(fx, key)).remark).toBe('x'.repeat(1_000_000));
    await expectRerunAddsNothing(t.db, fx);
  });
});

describe('past a limit, or refused by Postgres, only that list fails: recorded, rows untouched, the next run heals', () => {
  const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
  const cases: Array<{ name: string; faults: SandboxFaults; code: string; message: RegExp }> = [
    { name: 'nesting 50,000 deep', faults: { badValue: { list: LIST, kind: 'deep' } }, code: 'limit', message: /nests deeper than 64 levels \(limit 64\)$/ },
    {
      name: 'deep nesting beside a big number (the slower parse)',
      faults: { badValue: { list: LIST, json: `{"n":12345678901234567891,"d":${deep}}` } },
      code: 'limit',
      message: /nests deeper than 64 levels/,
    },
    {
      name: 'an object key of 10,240 characters',
      faults: { badValue: { list: LIST, kind: 'longKey' } },
      code: 'limit',
      message: /holds an object key of 10240 characters \(limit 1024\)$/,
    },
    {
      name: 'a number Postgres cannot hold (SQLSTATE 22003)',
      faults: { badValue: { list: LIST, json: '1e1000000' } },
      code: 'sqlstate_22003',
      message: /^shipment_modes: Postgres refused the list's data: .*numeric.* \(SQLSTATE 22003\)$/,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const fx = faultSource(sb, t.db);
      await fx.sync();
      const before = fx.served();
      changeList(sb, LIST);
      sb.control.setFaults(c.faults);
      const run = await fx.sync();
      const outcome = await expectFailedThenRecovered(sb, t.db, fx, LIST, before, run, c.code);
      expect(outcome.error).toMatch(c.message);
      if (c.code === 'limit') expect(outcome.error).toMatch(new RegExp(`^${LIST}: entry '${firstKey()}' `));
      expect(await snapshot(outcome.snapshotId)).toMatchObject({ status: 'failed', error_code: c.code, error: outcome.error });
      expect(run.outcomes.filter((o) => o.target.list.key !== LIST).every((o) => o.status === 'unchanged')).toBe(true);
    });
  }

  it('an entry key longer than an index row holds', async () => {
    const fx = faultSource(sb, t.db);
    await fx.sync();
    sb.control.addEntry(LIST, { code: 'K'.repeat(3000), description: 'a key no index holds' });
    const run = await fx.sync();
    expect(run.status).toBe('partial');
    const outcome = fx.outcome(run, LIST);
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(/^shipment_modes: entry \d+ \(key 'K{80}…'\) has an entry key of 3000 bytes \(limit 1024/);
    const { rows } = await t.db.query('select 1 from refdata.entries where environment = $1 and length(entry_key) > 100', [fx.source.environment]);
    expect(rows).toEqual([]);
  });
});

describe('the worker', () => {
  it('stores replaced text, and fails a target past a limit or refused by Postgres at once, without retries', async () => {
    const prefix = testQueuePrefix();
    const extra = { REFSYNC_ENVIRONMENT: 'bad-data-worker', REFSYNC_LISTS: `${LIST},equipment_types` };
    const config = workerConfig(sb, t.url, extra);
    const worker = await startTestWorker(config, prefix);
    const cases: Array<{ faults: SandboxFaults; run: string; code: string | null }> = [
      { faults: { badValue: { list: LIST, kind: 'nul' } }, run: 'succeeded', code: null },
      { faults: { badValue: { list: LIST, kind: 'deep' } }, run: 'partial', code: 'limit' },
      { faults: { badValue: { list: LIST, kind: 'longKey' } }, run: 'partial', code: 'limit' },
      { faults: { badValue: { list: LIST, json: '1e1000000' } }, run: 'partial', code: 'sqlstate_22003' },
    ];
    for (const [i, c] of cases.entries()) {
      const slot = `bad-data-${i}`;
      sb.control.setFaults(c.faults);
      await enqueueManualRuns(worker.queue, config.sources, { slot });
      const run = await waitFor(async () => {
        const { rows } = await t.db.query<{ id: number; status: string }>(
          "select id, status from refdata.sync_runs where environment = 'bad-data-worker' and slot = $1",
          [slot],
        );
        return rows[0] && rows[0].status !== 'running' && rows[0];
      }, `the run of ${slot} to close`);
      expect(run.status, slot).toBe(c.run);
      const snaps = await t.db.query<{ list_key: string; status: string; error_code: string | null }>(
        'select list_key, status, error_code from refdata.snapshots where run_id = $1 order by list_key',
        [run.id],
      );
      expect(snaps.rows, slot).toEqual([
        { list_key: 'equipment_types', status: 'ok', error_code: null },
        { list_key: LIST, status: c.code ? 'failed' : 'ok', error_code: c.code },
      ]);
      const job = await testQueue(prefix).getJob(`target~bad-data-worker~${LIST}~~${slot}`);
      if (!c.code) {
        // Synced in its run job (src/queue/handlers/inline-targets.ts), which completed: no target job.
        expect(job, slot).toBeUndefined();
        expect(await (await testQueue(prefix).getJob(`run~bad-data-worker~${slot}`))!.getState(), slot).toBe('completed');
        continue;
      }
      // The run job left the failed list to a target job, which fails it at once.
      expect(await job!.getState(), slot).toBe('failed');
      expect(job!.attemptsMade, slot).toBe(1);
    }
  });
});

describe('refsync sync', () => {
  it('with a NUL in one list, every target syncs; the NUL is stored as U+FFFD', async () => {
    sb.control.setFaults({ badValue: { list: LIST, kind: 'nul', field: 'description' } });
    const env = sandboxEnv(sb, {
      DATABASE_URL: t.url,
      REFSYNC_ENVIRONMENT: 'bad-data-cli',
      // Every variant the sandbox serves: every target of a full sync.
      REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,2025-09-01,unpinned',
      LOG_LEVEL: 'error',
      REDIS_URL: inject('redisUrl'),
    });
    const res = await runCli(['sync'], { env, timeoutMs: 120_000 });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const targets = everySandboxTarget();
    expect(res.stdout.trim().split('\n').at(-1)).toMatch(new RegExp(`: succeeded — ${targets} changed, 0 unchanged, 0 held, 0 failed, of ${targets} lists$`));
    const { rows } = await t.db.query<{ description: string }>(
      "select description from refdata.entries where environment = 'bad-data-cli' and list_key = $1 and entry_key = $2",
      [LIST, firstKey()],
    );
    expect(rows).toEqual([{ description: 'before\ufffdafter' }]);

    // An entry past a limit: exit 1, one line for the list, no top-level error.
    sb.control.setFaults({ badValue: { list: LIST, kind: 'deep' } });
    const failed = await runCli(['sync', '--list', `${LIST},equipment_types`], { env });
    expect(failed.stderr).toBe('');
    expect(failed.code).toBe(1);
    const lines = failed.stdout.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('failed '))).toEqual([
      expect.stringMatching(new RegExp(`^failed +${LIST} .* ${LIST}: entry '${firstKey()}' nests deeper than 64 levels \\(limit 64\\)$`)),
    ]);
    expect(lines.at(-1)).toMatch(/: partial — 0 changed, 1 unchanged, 0 held, 1 failed, of 2 lists$/);
  });
});

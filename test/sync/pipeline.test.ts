import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalog, targetsFor } from '../../src/catalog/catalog.ts';
import { canonicalJson, normalizeEntry } from '../../src/sync/collect/collect.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { count, pipelineFixture } from './fixture.ts';

const t = useTestDatabase();
let sb: Sandbox;
let fx: ReturnType<typeof pipelineFixture>;

beforeAll(async () => {
  sb = await useSandbox();
  fx = pipelineFixture(sb, {
    REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,2025-09-01,unpinned',
    REFSYNC_ALERT_ON: 'added,removed,modified,reappeared,schema_changed,held,failed',
  });
});
afterAll(async () => {
  await fx?.client.close();
});

describe('a first sync', () => {
  it('fills every view with exactly the entries the sandbox serves', async () => {
    const run = await fx.sync(t.db);
    expect(run.status).toBe('succeeded');
    for (const target of targetsFor(fx.source)) {
      const selector =
        target.list.variants === 'carrier'
          ? { carrier: target.variant }
          : target.list.variants === 'charge_code_version' && target.variant !== 'unpinned'
            ? { version: target.variant }
            : {};
      const served = sb.control.getEntries(target.list.key, selector);
      const expected = served
        .map((e, i) => normalizeEntry(target.list, e, i))
        .map((n) => ({ entry_key: n.entryKey, code: n.code, description: n.description, payload: canonicalJson(JSON.parse(n.payload)) }))
        .sort((a, b) => (a.entry_key < b.entry_key ? -1 : 1));
      const variantColumn = target.list.key === 'charge_codes' ? 'version' : target.list.key === 'carrier_package_types' ? 'carrier' : 'variant';
      const { rows } = await t.db.query<{ entry_key: string; code: string; description: string; payload: unknown }>(
        `select entry_key, code, description, payload from refdata.${target.list.key} where environment = 'sandbox' and ${variantColumn} = $1`,
        [target.variant],
      );
      const actual = rows.map((r) => ({ ...r, payload: canonicalJson(r.payload) })).sort((a, b) => (a.entry_key < b.entry_key ? -1 : 1));
      expect(actual.length, `${target.list.key}/${target.variant}`).toBeGreaterThan(0);
      expect(actual, `${target.list.key}/${target.variant}`).toEqual(expected);
    }
  });

  it('is a baseline: entries opened, no change rows, no alerts', async () => {
    expect(await count(t.db, 'entry_changes')).toBe(0);
    expect(await count(t.db, 'alerts')).toBe(0);
    expect(await count(t.db, 'snapshots', "status = 'ok' and changed")).toBe(targetsFor(fx.source).length);
  });

  it('keeps two charge-code versions side by side, differing as the sandbox versions do', async () => {
    const { rows } = await t.db.query<{ version: string; n: number }>(
      'select version, count(*)::int as n from refdata.charge_codes group by version order by version',
    );
    expect(rows.map((r) => r.version)).toEqual(['2024-06-11', '2025-09-01', 'unpinned']);
    const n = (v: string) => rows.find((r) => r.version === v)!.n;
    expect(n('2024-06-11')).toBe(sb.control.getEntries('charge_codes', { version: '2024-06-11' }).length);
    expect(n('2025-09-01')).toBe(sb.control.getEntries('charge_codes', { version: '2025-09-01' }).length);
    expect(n('2024-06-11')).not.toBe(n('2025-09-01'));
  });
});

describe('an unchanged sync', () => {
  it('records unchanged snapshots and writes no entry or change rows', async () => {
    const entriesBefore = await count(t.db, 'entries');
    const snapshotsBefore = await count(t.db, 'snapshots');
    const run = await fx.sync(t.db);
    expect(run.status).toBe('succeeded');
    expect(run.outcomes.every((o) => o.status === 'unchanged')).toBe(true);
    expect(await count(t.db, 'entries')).toBe(entriesBefore);
    expect(await count(t.db, 'entry_changes')).toBe(0);
    expect(await count(t.db, 'snapshots')).toBe(snapshotsBefore + run.outcomes.length);
    expect(await count(t.db, 'snapshots', 'run_id = $1 and changed', [run.runId])).toBe(0);
  });
});

describe('changes', () => {
  let before: Date;

  it('gives exactly one change row per added, removed and modified entry, with SCD2 intervals', async () => {
    const { rows: clock } = await t.db.query<{ now: Date }>('select clock_timestamp() as now');
    before = clock[0]!.now;
    sb.control.addEntry('accessorials', { id: 9001, code: 'ZZTEST', description: 'Test accessorial', long_description: 'x', is_charge_code: false });
    sb.control.removeEntry('accessorials', 'LGDEL');
    sb.control.modifyEntry('accessorials', 'APPTDEL', { description: 'Appointment (renamed)' });
    const run = await fx.sync(t.db, ['accessorials']);
    expect(run.outcomes[0]!.status).toBe('changed');
    expect(run.outcomes[0]!.counts).toEqual({ added: 1, removed: 1, modified: 1, reappeared: 0, reshaped: 0 });

    const { rows } = await t.db.query<{ entry_key: string; change: string; changed_fields: string[] | null; before: unknown; after: unknown }>(
      "select entry_key, change, changed_fields, before, after from refdata.entry_changes where list_key = 'accessorials' order by entry_key",
    );
    expect(rows.map((r) => [r.entry_key, r.change])).toEqual([
      ['APPTDEL', 'modified'],
      ['LGDEL', 'removed'],
      ['ZZTEST', 'added'],
    ]);
    expect(rows[0]!.changed_fields).toEqual(['description']);
    expect(rows[1]!.after).toBeNull();
    expect(rows[2]!.before).toBeNull();

    // APPT: the old row closed exactly where the new one opens; exactly one current row.
    const { rows: history } = await t.db.query<{ valid_from: Date; valid_to: Date | null; description: string }>(
      "select valid_from, valid_to, description from refdata.entries where list_key = 'accessorials' and entry_key = 'APPTDEL' order by valid_from",
    );
    expect(history).toHaveLength(2);
    expect(history[0]!.valid_to?.getTime()).toBe(history[1]!.valid_from.getTime());
    expect(history[1]!.valid_to).toBeNull();
    expect(history[1]!.description).toBe('Appointment (renamed)');
    const { rows: removed } = await t.db.query<{ valid_to: Date | null }>(
      "select valid_to from refdata.entries where list_key = 'accessorials' and entry_key = 'LGDEL'",
    );
    expect(removed).toHaveLength(1);
    expect(removed[0]!.valid_to).not.toBeNull();
  });

  it('records a key that comes back as reappeared', async () => {
    sb.control.addEntry('accessorials', { id: 77, code: 'LGDEL', description: 'Liftgate delivery', long_description: 'back', is_charge_code: true });
    const run = await fx.sync(t.db, ['accessorials']);
    expect(run.outcomes[0]!.counts).toEqual({ added: 0, removed: 0, modified: 0, reappeared: 1, reshaped: 0 });
    const { rows } = await t.db.query<{ change: string }>("select change from refdata.entry_changes where entry_key = 'LGDEL' order by id");
    expect(rows.map((r) => r.change)).toEqual(['removed', 'reappeared']);
    expect(await count(t.db, 'entries', "list_key = 'accessorials' and entry_key = 'LGDEL' and valid_to is null")).toBe(1);
  });

  it('answers an as-of query with the list as it was', async () => {
    const { rows: then } = await t.db.query<{ entry_key: string; description: string }>(
      `select entry_key, description from refdata.entries
       where environment = 'sandbox' and list_key = 'accessorials' and variant = ''
         and valid_from <= $1 and (valid_to is null or valid_to > $1)`,
      [before],
    );
    const keys = then.map((r) => r.entry_key);
    expect(keys).not.toContain('ZZTEST');
    expect(then.find((r) => r.entry_key === 'APPTDEL')!.description).not.toBe('Appointment (renamed)');
    expect(keys).toContain('LGDEL');
  });

  it('writes one digest alert per kind of change', async () => {
    const { rows } = await t.db.query<{ kind: string; payload: { count: number; entries: { code: string }[] } }>(
      "select kind, payload from refdata.alerts where list_key = 'accessorials' order by id",
    );
    expect(rows.map((r) => r.kind)).toEqual(['added', 'removed', 'modified', 'reappeared']);
    expect(rows[0]!.payload.entries.map((e) => e.code)).toEqual(['ZZTEST']);
  });
});

describe('failures', () => {
  it('keeps the previous data of a list that answers 500s, and ends the run partial', async () => {
    const current = await count(t.db, 'current_entries', "list_key = 'hazmat'");
    sb.control.setFaults({ errorCount: 10, paths: ['hazmat'] });
    sb.control.removeEntry('hazmat', '1.1');
    const run = await fx.sync(t.db, ['hazmat', 'shipment_modes']);
    sb.control.clearFaults();
    expect(run.status).toBe('partial');
    const hazmat = run.outcomes.find((o) => o.target.list.key === 'hazmat')!;
    expect(hazmat.status).toBe('failed');
    expect(hazmat.errorCode).toBe('http_status');
    expect(run.outcomes.find((o) => o.target.list.key === 'shipment_modes')!.status).toBe('unchanged');
    expect(await count(t.db, 'current_entries', "list_key = 'hazmat'")).toBe(current);
    const { rows } = await t.db.query<{ status: string; error: string }>('select status, error from refdata.sync_runs where id = $1', [run.runId]);
    expect(rows[0]!.error).toMatch(/hazmat/);
  });

  it('keeps the previous data when the body is truncated', async () => {
    const current = await count(t.db, 'current_entries', "list_key = 'hazmat'");
    sb.control.setFaults({ truncate: { count: 10 }, paths: ['hazmat'] });
    const run = await fx.sync(t.db, ['hazmat']);
    sb.control.clearFaults();
    expect(run.outcomes[0]!.status).toBe('failed');
    expect(run.status).toBe('failed');
    expect(await count(t.db, 'current_entries', "list_key = 'hazmat'")).toBe(current);
    // and once the service answers again, the pending removal is applied
    const ok = await fx.sync(t.db, ['hazmat']);
    expect(ok.outcomes[0]!.counts.removed).toBe(1);
  });

  it('collapses identical duplicate keys and fails a list with conflicting ones, naming the key', async () => {
    sb.control.setFaults({ duplicateKey: { list: 'shipment_modes', mode: 'identical' } });
    const same = await fx.sync(t.db, ['shipment_modes']);
    expect(same.outcomes[0]!.status).toBe('unchanged');
    sb.control.setFaults({ duplicateKey: { list: 'shipment_modes', mode: 'conflicting' } });
    const conflict = await fx.sync(t.db, ['shipment_modes']);
    sb.control.clearFaults();
    expect(conflict.outcomes[0]!.status).toBe('failed');
    expect(conflict.outcomes[0]!.errorCode).toBe('duplicate_key');
    expect(conflict.outcomes[0]!.error).toMatch(/key '.+' appears twice/);
  });
});

describe('the mass-removal guard', () => {
  it('holds an empty answer, alerts, and applies it only with acceptRemovals', async () => {
    const current = await count(t.db, 'current_entries', "list_key = 'piece_types'");
    expect(current).toBeGreaterThan(0);
    sb.control.setEntries('piece_types', []);
    const held = await fx.sync(t.db, ['piece_types']);
    expect(held.outcomes[0]!.status).toBe('held');
    expect(held.status).toBe('failed');
    expect(await count(t.db, 'current_entries', "list_key = 'piece_types'")).toBe(current);
    expect(await count(t.db, 'alerts', "list_key = 'piece_types' and kind = 'held'")).toBe(1);
    // held again with the same answer: no second alert
    await fx.sync(t.db, ['piece_types']);
    expect(await count(t.db, 'alerts', "list_key = 'piece_types' and kind = 'held'")).toBe(1);

    const applied = await fx.sync(t.db, ['piece_types'], { acceptRemovals: true });
    expect(applied.outcomes[0]!.status).toBe('changed');
    expect(applied.outcomes[0]!.counts.removed).toBe(current);
    expect(await count(t.db, 'current_entries', "list_key = 'piece_types'")).toBe(0);
  });

  it('holds a fetch that would retire more than the allowed share', async () => {
    const entries = sb.control.getEntries('service_levels');
    sb.control.setEntries('service_levels', entries.slice(0, Math.floor(entries.length / 3)) as Record<string, unknown>[]);
    const held = await fx.sync(t.db, ['service_levels']);
    expect(held.outcomes[0]!.status).toBe('held');
    expect(held.outcomes[0]!.error).toMatch(/would remove \d+ of \d+ entries/);
    // The message names the command that accepts it, as the runbook does: the list included.
    expect(held.outcomes[0]!.error).toMatch(/; run refsync sync --list service_levels --accept-removals to apply it$/);
  });
});

describe('schema drift', () => {
  it('alerts when the fields of a list change', async () => {
    sb.control.renameField('shipment_statuses', 'description', 'label');
    const run = await fx.sync(t.db, ['shipment_statuses']);
    expect(run.outcomes[0]!.status).toBe('changed');
    const { rows } = await t.db.query<{ payload: { fields_added: string[]; fields_removed: string[] } }>(
      "select payload from refdata.alerts where list_key = 'shipment_statuses' and kind = 'schema_changed'",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.payload.fields_added).toContain('label:string');
    expect(rows[0]!.payload.fields_removed).toContain('description:string');
  });
});

describe('concurrency', () => {
  it('commits a change once when two syncs of one target run at once', async () => {
    sb.control.addEntry('shipment_modes', { code: 'HOVER', description: 'Hovercraft' });
    const [a, b] = await Promise.all([fx.sync(t.db, ['shipment_modes']), fx.sync(t.db, ['shipment_modes'])]);
    const statuses = [a.outcomes[0]!.status, b.outcomes[0]!.status].sort();
    expect(statuses).toEqual(['changed', 'unchanged']);
    expect(await count(t.db, 'entry_changes', "list_key = 'shipment_modes' and entry_key = 'HOVER'")).toBe(1);
    expect(await count(t.db, 'entries', "list_key = 'shipment_modes' and entry_key = 'HOVER'")).toBe(1);
  });

  it('has exactly one current row per live key everywhere, and no overlapping history', async () => {
    const { rows: dupes } = await t.db.query(
      'select environment, list_key, variant, entry_key from refdata.entries where valid_to is null group by 1, 2, 3, 4 having count(*) > 1',
    );
    expect(dupes).toEqual([]);
    const { rows: overlaps } = await t.db.query(`
      select a.entry_key from refdata.entries a join refdata.entries b
        on a.environment = b.environment and a.list_key = b.list_key and a.variant = b.variant
       and a.entry_key = b.entry_key and a.id < b.id
       and tstzrange(a.valid_from, a.valid_to) && tstzrange(b.valid_from, b.valid_to)`);
    expect(overlaps).toEqual([]);
  });
});

it('closes a run with no targets as succeeded', async () => {
  const run = await fx.sync(t.db, []);
  expect(run.outcomes).toEqual([]);
  expect(run.status).toBe('succeeded');
  const { rows } = await t.db.query<{ status: string; finished_at: Date | null; targets_total: number }>(
    'select status, finished_at, targets_total from refdata.sync_runs where id = $1',
    [run.runId],
  );
  expect(rows[0]).toMatchObject({ status: 'succeeded', targets_total: 0 });
  expect(rows[0]!.finished_at).not.toBeNull();
});

it('covers every list of the catalog', () => {
  expect(new Set(targetsFor(fx.source).map((t) => t.list.key))).toEqual(new Set(catalog.map((l) => l.key)));
});

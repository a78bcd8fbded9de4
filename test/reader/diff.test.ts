import { beforeAll, describe, expect, it } from 'vitest';
import { entriesDiff } from '../../src/db/functions.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { refsync, syncSandbox, V2024 } from './fixture.ts';

const now = async (t: { db: { query: <R>(sql: string) => Promise<{ rows: R[] }> } }) =>
  (await t.db.query<{ now: Date }>('select clock_timestamp() as now')).rows[0]!.now;

// One diff for any list between two times, in the words every other change uses.
describe('refdata.entries_diff and refsync diff', () => {
  const t = useTestDatabase();
  let sb: Sandbox;
  let beforeFirst: Date;
  let between: Date;
  let afterEdit: Date;

  beforeAll(async () => {
    sb = await useSandbox();
    beforeFirst = await now(t);
    await syncSandbox(t.db, sb, ['accessorials', 'charge_codes']);
    between = await now(t);
    sb.control.modifyEntry('accessorials', 'APPTDEL', { description: 'Appointment (scheduled)' });
    sb.control.removeEntry('accessorials', 'LGDEL');
    sb.control.addEntry('accessorials', { id: 9901, code: 'ZDIFF', description: 'Diff test', long_description: '', is_charge_code: false });
    sb.control.modifyEntry('charge_codes', 'SOC', { description: 'Stop Off Charge (per stop)' }, { version: V2024 });
    await syncSandbox(t.db, sb, ['accessorials', 'charge_codes']);
    afterEdit = await now(t);
  });

  it('gives added, removed and modified with before, after and the changed fields', async () => {
    const rows = await entriesDiff(t.db, 'accessorials', between, afterEdit);
    expect(rows.map((r) => [r.change, r.code]).sort()).toEqual([
      ['added', 'ZDIFF'],
      ['modified', 'APPTDEL'],
      ['removed', 'LGDEL'],
    ]);
    const appt = rows.find((r) => r.code === 'APPTDEL')!;
    expect(appt).toMatchObject({ changed_fields: ['description'], description_after: 'Appointment (scheduled)' });
    expect(appt.before!.description).not.toBe('Appointment (scheduled)');
    expect(appt.after!.description).toBe('Appointment (scheduled)');
    expect(rows.find((r) => r.code === 'ZDIFF')).toMatchObject({ before: null, changed_fields: null, description_before: null });
    expect(rows.find((r) => r.code === 'LGDEL')).toMatchObject({ after: null, changed_fields: null });
    // Nothing changed after the second sync, nor between two times before the edit.
    expect(await entriesDiff(t.db, 'accessorials', afterEdit, await now(t))).toEqual([]);
    // The variant narrows a versioned list; the other list's changes never leak in.
    const cc = await entriesDiff(t.db, 'charge_codes', between, afterEdit, { variant: V2024 });
    expect(cc.map((r) => [r.change, r.code, r.variant])).toEqual([['modified', 'SOC', V2024]]);
  });

  it('before the first sync the list is empty: everything reads as added, and the CLI says why', async () => {
    const rows = await entriesDiff(t.db, 'accessorials', beforeFirst, between);
    expect(rows.length).toBe(sb.control.getEntries('accessorials').length);
    expect(new Set(rows.map((r) => r.change))).toEqual(new Set(['added']));
    const res = await refsync(['diff', '--list', 'accessorials', '--from', beforeFirst.toISOString(), '--to', between.toISOString()], { DATABASE_URL: t.url });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/^refsync: diff: accessorials was first synced .*, after --from; entries it held then show as added\n$/);
  });

  it('refsync diff prints before → after per field, and --json carries every row', async () => {
    const args = ['diff', '--list', 'accessorials', '--from', between.toISOString(), '--to', afterEdit.toISOString()];
    const text = await refsync(args, { DATABASE_URL: t.url });
    expect(text.code).toBe(0);
    expect(text.stderr).toBe('');
    expect(text.stdout).toContain('added (1):');
    expect(text.stdout).toContain('removed (1):');
    expect(text.stdout).toContain('modified (1):');
    expect(text.stdout).toMatch(/APPTDEL\s+description: ".*" → "Appointment \(scheduled\)"/);
    expect(text.stdout).toContain('1 added, 1 removed, 1 modified');
    const json = await refsync([...args, '--json'], { DATABASE_URL: t.url });
    const report = JSON.parse(json.stdout) as { list_key: string; changes: Array<{ change: string; code: string }> };
    expect(report.list_key).toBe('accessorials');
    expect(report.changes.map((c) => [c.change, c.code]).sort()).toEqual([
      ['added', 'ZDIFF'],
      ['modified', 'APPTDEL'],
      ['removed', 'LGDEL'],
    ]);
  });

  it('bad arguments are one line and exit 2', async () => {
    for (const args of [
      ['diff', '--from', '2026-01-01'],
      ['diff', '--list', 'accessorials'],
      ['diff', '--list', 'nope', '--from', '2026-01-01'],
      ['diff', '--list', 'accessorials', '--list', 'hazmat', '--from', '2026-01-01'],
      ['diff', '--list', 'accessorials', '--from', 'yesterday'],
      ['diff', '--list', 'accessorials', '--from', '2026-02-01', '--to', '2026-01-01'],
    ]) {
      const res = await refsync(args, { DATABASE_URL: t.url });
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });
});

// An upstream that sends its headers and then one byte at a time (never silent for
// long enough to trip an idle timeout) is stopped by REFSYNC_REQUEST_DEADLINE_S and by
// REFSYNC_TARGET_DEADLINE_S in `refsync sync`: that list fails with an error naming the deadline,
// the other lists are written, the dripped list keeps its last good data, and the next run heals.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { runCli } from '../queue/helpers.ts';
import { changeList, expectNoSecretsIn, faultSource, workerEnv } from './harness.ts';
import { expectConsistentHistory, expectWholeStates } from './invariants.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});

/** The latest snapshot of each list of the environment. */
async function lastSnapshots(environment: string) {
  const { rows } = await t.db.query<{ list_key: string; status: string; error: string | null }>(
    `select distinct on (list_key) list_key, status, error from refdata.snapshots where environment = $1 order by list_key, id desc`,
    [environment],
  );
  return Object.fromEntries(rows.map((r) => [r.list_key, { status: r.status, error: r.error }]));
}

describe('a dripping upstream in refsync sync', () => {
  it.each([
    { setting: 'REFSYNC_REQUEST_DEADLINE_S', seconds: '2', names: /request deadline of 2 s \(REFSYNC_REQUEST_DEADLINE_S/ },
    { setting: 'REFSYNC_TARGET_DEADLINE_S', seconds: '3', names: /target deadline of 3 s \(REFSYNC_TARGET_DEADLINE_S/ },
  ])('$setting stops the dripped list; the others are written; its data untouched', async ({ setting, seconds, names }) => {
    const fx = faultSource(sb, t.db);
    expect((await fx.sync()).status).toBe('succeeded');
    const before = fx.served();
    changeList(sb, 'piece_types');
    changeList(sb, 'shipment_modes');
    const after = fx.served();
    // A byte every 200 ms: the body would take minutes, and is never silent for a second.
    sb.control.setFaults({ drip: { list: 'piece_types', intervalMs: 200 } });
    try {
      const cli = await runCli(['sync'], workerEnv(sb, fx.source, { DATABASE_URL: t.url, [setting]: seconds }), 60_000);
      expect(cli.code, cli.stderr).toBe(1);
      expect(`${cli.stdout}${cli.stderr}`).toMatch(names);
      expectNoSecretsIn({ output: () => cli });
    } finally {
      sb.control.clearFaults();
    }
    const snapshots = await lastSnapshots(fx.source.environment);
    expect(snapshots.piece_types?.status).toBe('failed');
    expect(snapshots.piece_types?.error).toMatch(names);
    expect(snapshots.shipment_modes).toEqual({ status: 'ok', error: null });
    expect(snapshots.equipment_types).toEqual({ status: 'ok', error: null });
    // shipment_modes took its change; piece_types kept the data it had before the drip.
    const matched = await expectWholeStates(t.db, fx.source, [before, after]);
    expect(matched.get('piece_types/')).toBe(0);
    expect(matched.get('shipment_modes/')).toBe(1);
    await expectConsistentHistory(t.db, fx.source);

    const healed = await fx.sync();
    expect(healed.status).toBe('succeeded');
    expect([...(await expectWholeStates(t.db, fx.source, [after])).values()].every((i) => i === 0)).toBe(true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { dbtSourcesYaml } from '../../src/dbt/sources.ts';
import { targetHealth } from '../../src/read/target-health.ts';
import { targetStatus } from '../../src/read/status-query.ts';
import { loadStatusPage, renderStatusPage } from '../../src/server/status-page.ts';
import { pipelineFixture } from '../sync/fixture.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { V2024, V2025 } from '../reader/fixture.ts';

// The schema policies beyond the matrix: a policy per list beating '*', the variants of a list
// held together and accepted together, and a hold that the next fetch resolves by itself.
describe('schema policies per list and per variant', () => {
  const t = useTestDatabase();
  let sb: Sandbox;
  let fx: ReturnType<typeof pipelineFixture>;

  beforeAll(async () => {
    sb = await useSandbox();
    fx = pipelineFixture(sb, {
      REFSYNC_CHARGE_CODE_VERSIONS: `${V2024},${V2025}`,
      REFSYNC_SCHEMA_CHANGES: JSON.stringify({ '*': 'freeze', shipment_modes: 'evolve', piece_types: 'hold-breaking' }),
    });
    expect((await fx.sync(t.db, ['shipment_modes', 'hazmat', 'charge_codes', 'piece_types'])).status).toBe('succeeded');
  });
  afterAll(async () => {
    await fx?.client.close();
  });

  it('reads the object form from REFSYNC_CONFIG too', () => {
    const source = loadConfig(sandboxEnv(sb, { REFSYNC_SCHEMA_CHANGES: 'freeze' })).sources[0]!;
    expect(source.schemaChanges).toEqual({ default: 'freeze', lists: {} });
    expect(fx.source.schemaChanges).toEqual({ default: 'freeze', lists: { shipment_modes: 'evolve', piece_types: 'hold-breaking' } });
  });

  it("a list's own policy beats '*'", async () => {
    sb.control.addField('shipment_modes', 'transit_days', 3);
    sb.control.addField('hazmat', 'transit_days', 3);
    const run = await fx.sync(t.db, ['shipment_modes', 'hazmat']);
    const status = Object.fromEntries(run.outcomes.map((o) => [o.target.list.key, o.status]));
    expect(status).toEqual({ shipment_modes: 'changed', hazmat: 'held' });
    expect(run.status).toBe('partial');
    // The read model behind refsync status (--json) and the metrics says why it is held.
    const hazmat = (await targetStatus(t.db)).find((r) => r.list_key === 'hazmat')!;
    expect(hazmat).toMatchObject({ last_status: 'held', last_error_code: 'held_schema', held_reason: 'schema', views_waiting: null });
    expect(hazmat.last_error).toMatch(/^held by schema policy freeze: transit_days: new \(bigint\); run refsync sync --list hazmat --accept-schema/);
    expect((await targetHealth(t.db)).find((r) => r.list_key === 'hazmat')).toMatchObject({ held: true, held_reason: 'schema' });
    // The status page names the command that accepts it.
    const page = renderStatusPage(await loadStatusPage(t.db, [fx.source]));
    expect(page).toContain('<code class="command">refsync sync --list hazmat --accept-schema</code>');
  });

  it("the dbt export names each source's schema policy", () => {
    const yaml = dbtSourcesYaml({ policies: [{ name: 'production', schemaChanges: fx.source.schemaChanges }] });
    expect(yaml).toContain('source production freeze, shipment_modes evolve, piece_types hold-breaking.');
    expect(dbtSourcesYaml()).not.toContain('Schema changes');
  });

  it('the pinned charge-code versions are held together, and one accept with --list applies every version', async () => {
    sb.control.addField('charge_codes', 'is_taxable', false);
    const held = await fx.sync(t.db, ['charge_codes']);
    expect(held.outcomes.map((o) => [o.target.variant, o.status]).sort()).toEqual([
      [V2024, 'held'],
      [V2025, 'held'],
    ]);
    const accepted = await fx.sync(t.db, ['charge_codes'], { acceptSchema: true });
    expect(accepted.outcomes.map((o) => o.status)).toEqual(['changed', 'changed']);
    const { rows } = await t.db.query<{ version: string; n: number }>(
      'select version, count(is_taxable)::int as n from refdata.charge_codes group by version order by version',
    );
    expect(rows.map((r) => r.version)).toEqual([V2024, V2025]);
    expect(rows.every((r) => r.n > 0)).toBe(true);
    expect((await fx.sync(t.db, ['charge_codes'])).outcomes.map((o) => o.status)).toEqual(['unchanged', 'unchanged']);
  });

  it('a hold the next fetch resolves by itself (the field is back as it was) is released without an accept', async () => {
    const served = sb.control.getEntries('piece_types') as Array<{ code: string; description: string }>;
    const first = served[0]!;
    // Every entry's description turns into an object: a change of kind, held under hold-breaking.
    for (const e of served) sb.control.modifyEntry('piece_types', e.code, { description: { text: e.description } });
    const held = (await fx.sync(t.db, ['piece_types'])).outcomes[0]!;
    expect(held.status).toBe('held');
    for (const e of served) sb.control.modifyEntry('piece_types', e.code, { description: e.description });
    const back = (await fx.sync(t.db, ['piece_types'])).outcomes[0]!;
    expect(back.status).toBe('unchanged');
    const { rows } = await t.db.query<{ description: string }>('select description from refdata.piece_types where code = $1', [first.code]);
    expect(rows[0]!.description).toBe(first.description);
  });
});

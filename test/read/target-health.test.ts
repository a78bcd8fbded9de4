// "Failed in a row" (the status pages and refsync_list_consecutive_failures): every sync since the
// last ok one that left the list unsynced counts, the first one included, whether the list failed
// or the service answered that it does not serve it (unavailable, a 404).
import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/config/types.ts';
import { targetHealth } from '../../src/read/target-health.ts';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import { createUpstreamClient } from '../../src/upstream/factory.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { sandboxSource } from '../helpers/source.ts';

const tdb = useTestDatabase();

async function syncOnce(source: SourceConfig, lists: ListKey[]) {
  const client = createUpstreamClient(source, undefined, { retry: { attempts: 1, baseDelayMs: 5, maxDelayMs: 20 } });
  try {
    return await runSync({ db: tdb.db, sources: [source], clientFor: () => client, trigger: 'cli', lists });
  } finally {
    await client.close();
  }
}

const streakOf = async (environment: string, list: string, variant = '') =>
  (await targetHealth(tdb.db)).find((h) => h.environment === environment && h.list_key === list && h.variant === variant)?.consecutive_failures;

describe('failed in a row', () => {
  it('is 1 on the first failure after an ok sync, 2 on the next, 0 again once a sync is ok', async () => {
    const sb = await useSandbox();
    const source = sandboxSource(sb, { REFSYNC_ENVIRONMENT: 'streak-failed' });
    await syncOnce(source, ['shipment_modes']);
    expect(await streakOf('streak-failed', 'shipment_modes')).toBe(0);
    sb.control.setFaults({ duplicateKey: { list: 'shipment_modes', mode: 'conflicting' } });
    await syncOnce(source, ['shipment_modes']);
    expect(await streakOf('streak-failed', 'shipment_modes')).toBe(1);
    await syncOnce(source, ['shipment_modes']);
    expect(await streakOf('streak-failed', 'shipment_modes')).toBe(2);
    sb.control.clearFaults();
    await syncOnce(source, ['shipment_modes']);
    expect(await streakOf('streak-failed', 'shipment_modes')).toBe(0);
  });

  it('counts a list the service does not serve (unavailable) from its first answer, as it counts a failure', async () => {
    const sb = await useSandbox();
    // The sandbox serves package types for known carriers only: "acme" answers 404.
    const source = sandboxSource(sb, { REFSYNC_ENVIRONMENT: 'streak-unavailable', REFSYNC_CARRIERS: 'ups,acme' });
    const [result] = await syncOnce(source, ['carrier_package_types']);
    expect(result!.outcomes.map((o) => `${o.target.variant}:${o.status}`).sort()).toEqual(['acme:unavailable', 'ups:changed']);
    expect(await streakOf('streak-unavailable', 'carrier_package_types', 'acme')).toBe(1);
    expect(await streakOf('streak-unavailable', 'carrier_package_types', 'ups')).toBe(0);
    await syncOnce(source, ['carrier_package_types']);
    expect(await streakOf('streak-unavailable', 'carrier_package_types', 'acme')).toBe(2);
  });
});

// Two sources (two sandboxes, two accounts) in one worker: each syncs with its own credentials,
// and neither origin ever sees the other's.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { SANDBOX_KEYED_ACCOUNT, SANDBOX_MACHINE_ACCOUNT, useSandbox } from '../helpers/sandbox.ts';
import { startTestWorker, waitFor, workerConfig, testQueuePrefix } from './helpers.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const tdb = useTestDatabase();

describe('several sources', () => {
  it('each source syncs from its own origin with its own credentials', async () => {
    // Each sandbox knows one account only: a credential sent to the wrong origin would be refused.
    const acme = await useSandbox({ accounts: [SANDBOX_MACHINE_ACCOUNT] });
    const globex = await useSandbox({ accounts: [SANDBOX_KEYED_ACCOUNT] });
    const dir = testTempDir('refsync-two');
    const secret = join(dir, 'acme_password');
    writeFileSync(secret, `${SANDBOX_MACHINE_ACCOUNT.password}\n`);
    const file = join(dir, 'sources.json');
    writeFileSync(
      file,
      JSON.stringify({
        sources: [
          {
            name: 'prod-acme',
            environment: 'production-acme',
            baseUrl: acme.url,
            email: SANDBOX_MACHINE_ACCOUNT.email,
            passwordFile: secret,
            caFile: acme.caFile,
          },
          {
            name: 'prod-globex',
            environment: 'production-globex',
            baseUrl: globex.url,
            apiKey: SANDBOX_KEYED_ACCOUNT.apiKey,
            apiKeyScheme: 'apikey',
            caFile: globex.caFile,
          },
        ],
      }),
    );
    const config = workerConfig(acme, tdb.url, { REFSYNC_CONFIG: file, REFSYNC_LISTS: 'shipment_modes,equipment_types' });
    const worker = await startTestWorker(config, testQueuePrefix());
    await enqueueManualRuns(worker.queue, config.sources, { slot: 'both-1' });
    const runs = await waitFor(async () => {
      const { rows } = await tdb.db.query<{ source: string; environment: string; status: string }>(
        "select source, environment, status from refdata.sync_runs where slot = 'both-1' order by source",
      );
      return rows.length === 2 && rows.every((r) => r.status !== 'running') && rows;
    }, 'both runs to close');
    expect(runs).toEqual([
      { source: 'prod-acme', environment: 'production-acme', status: 'succeeded' },
      { source: 'prod-globex', environment: 'production-globex', status: 'succeeded' },
    ]);
    const entries = await tdb.db.query<{ environment: string; n: number }>(
      "select environment, count(*)::int as n from refdata.current_entries where list_key = 'shipment_modes' group by environment order by environment",
    );
    expect(entries.rows.map((r) => r.environment)).toEqual(['production-acme', 'production-globex']);

    const schemes = (log: { authScheme: string | null; path: string }[]) => new Set(log.filter((r) => r.path.includes('shipment')).map((r) => r.authScheme));
    // acme: logged in with its email and password, then used the token; never an API key.
    expect(
      acme.control
        .requestLog()
        .filter((r) => r.path === '/v2/auth/token/')
        .map((r) => r.status),
    ).toEqual([200]);
    expect(schemes(acme.control.requestLog())).toEqual(new Set(['token']));
    // globex: its API key only; no login was ever attempted there.
    expect(globex.control.requestLog().filter((r) => r.path === '/v2/auth/token/')).toEqual([]);
    expect(schemes(globex.control.requestLog())).toEqual(new Set(['apikey']));
    for (const sb of [acme, globex]) expect(sb.control.requestLog().every((r) => r.status === 200)).toBe(true);
  });
});

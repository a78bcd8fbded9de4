// A burst of readiness probes against a real worker: 300 concurrent /readyz are all answered, and
// the worker's backends (counted in pg_stat_activity by application name) never exceed its
// REFSYNC_DB_MAX_CONNECTIONS, since the probes share one check and its connection is the pool's.
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { startTestWorker, workerConfig, testQueuePrefix } from '../queue/helpers.ts';

const tdb = useTestDatabase();
const BUDGET = 3;

/** The worker's backends on the test's database: every refsync connection but this test's own. */
async function workerBackends(): Promise<number> {
  const { rows } = await tdb.db.query<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where datname = $1 and application_name like 'refsync%' and application_name <> 'refsync-test'",
    [tdb.name],
  );
  return rows[0]!.n;
}

describe('/readyz under a burst', () => {
  it('300 at once: every one answered ready, the worker within its connection budget throughout', async () => {
    const sb = await useSandbox();
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'readyz-burst', REFSYNC_DB_MAX_CONNECTIONS: String(BUDGET), REFSYNC_CONCURRENCY: '1' });
    const worker = await startTestWorker(config, testQueuePrefix());
    const base = `http://127.0.0.1:${worker.http.port}`;
    let sampling = true;
    const counts: number[] = [];
    const sampler = (async () => {
      while (sampling) counts.push(await workerBackends());
    })();
    const answers = await Promise.all(
      Array.from({ length: 300 }, async () => {
        const res = await fetch(`${base}/readyz`);
        return `${res.status} ${((await res.json()) as { checks: { postgres: string } }).checks.postgres}`;
      }),
    );
    sampling = false;
    await sampler;
    expect(new Set(answers)).toEqual(new Set(['200 ok']));
    expect(counts.length).toBeGreaterThan(0);
    expect(Math.max(...counts)).toBeGreaterThan(0);
    expect(Math.max(...counts)).toBeLessThanOrEqual(BUDGET);
  });
});

import { beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { UNINDEXED_USAGE_MIN_BYTES, unindexedUsage } from '../../src/impact/usage-index.ts';
import { runCli } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { spawnCli, waitFor, testQueuePrefix } from '../queue/helpers.ts';
import { usageConfig } from './fixture.ts';

// A usage column without an index costs every sync that changes its codes a read of the whole table
// inside the list's transaction (docs/impact.md, "Index"): refsync names such a column, its
// table's size and the statement that adds the index, at the start of `refsync sync` and of the
// worker, and in `refsync status`.

const t = useTestDatabase();
let sb: Sandbox;

beforeAll(async () => {
  sb = await useSandbox();
  await t.db.query(`
    create table public.facts_indexed (charge_code text, shipped_at timestamptz);
    create index on public.facts_indexed (charge_code, shipped_at);
    -- Indexes that do not begin with the column, or only on an expression of it, do not serve the impact's filter.
    create table public.facts_other_indexes (charge_code text, shipped_at timestamptz);
    create index on public.facts_other_indexes (shipped_at, charge_code);
    create index on public.facts_other_indexes (lower(charge_code));
    insert into public.facts_other_indexes select 'C' || g, now() from generate_series(1, 2000) as g;
    analyze public.facts_other_indexes;
    -- A partitioned table is as large as its partitions.
    create table public.facts_partitioned (charge_code text, shipped_at timestamptz) partition by range (shipped_at);
    create table public.facts_partitioned_all partition of public.facts_partitioned for values from ('2000-01-01') to ('2100-01-01');
    insert into public.facts_partitioned select 'C' || g, '2025-01-01' from generate_series(1, 500) as g;
    -- Past the warning's size: about 66 MiB of pages at four rows a page (plain storage keeps the
    -- filler in the table, not in TOAST; unlogged: no WAL to write for a test).
    create unlogged table public.facts_large (charge_code text, shipped_at timestamptz, filler char(1900));
    alter table public.facts_large alter column filler set storage plain;
    insert into public.facts_large select 'C' || (g % 50), now(), 'x' from generate_series(1, 34000) as g;
  `);
});

/** The sources a REFSYNC_CONFIG holding only `usage` gives, with the sandbox's source from the environment. */
function sourcesWith(usage: unknown[]) {
  return loadConfig(sandboxEnv(sb, { REFSYNC_CONFIG: usageConfig(usage), REFSYNC_LISTS: 'charge_codes,accessorials' })).sources;
}

describe('usage columns without an index', () => {
  it('lists each column no index begins with, once, with its table size and the statement that adds one', async () => {
    const sources = sourcesWith([
      { list: 'charge_codes', column: 'public.facts_indexed.charge_code', at: 'shipped_at' },
      { list: 'charge_codes', column: 'public.facts_other_indexes.charge_code' },
      // The same column for two lists: reported once.
      { list: 'accessorials', column: 'public.facts_other_indexes.charge_code', at: 'shipped_at' },
      { list: 'charge_codes', column: 'public.facts_partitioned.charge_code', at: 'shipped_at' },
      // A table or column that does not exist is each sync's impact error, not this check's.
      { list: 'charge_codes', column: 'public.no_such_table.charge_code' },
      { list: 'charge_codes', column: 'public.facts_indexed.no_such_column' },
    ]);
    const found = await unindexedUsage(t.db, sources, 0);
    expect(found.map((u) => [u.column, u.createIndex])).toEqual([
      ['public.facts_other_indexes.charge_code', 'CREATE INDEX ON public.facts_other_indexes (charge_code)'],
      ['public.facts_partitioned.charge_code', 'CREATE INDEX ON public.facts_partitioned (charge_code, shipped_at)'],
    ]);
    expect(found[0]!.rowsEstimate).toBe(2000);
    expect(found[0]!.bytes).toBeGreaterThan(0);
    expect(found[1]!.bytes).toBeGreaterThan(0);

    // The suggested index is the one that settles it.
    await t.db.query(found[1]!.createIndex);
    expect((await unindexedUsage(t.db, sources, 0)).map((u) => u.column)).toEqual(['public.facts_other_indexes.charge_code']);
    // Small tables are read whole about as fast: not worth a warning at the default size.
    expect(await unindexedUsage(t.db, sources)).toEqual([]);
    expect(await unindexedUsage(t.db, sourcesWith([]))).toEqual([]);
  });

  it('is said by refsync sync (stderr), refsync status (a line, and unindexed_usage in --json) and the worker as it starts', async () => {
    const env = sandboxEnv(sb, {
      DATABASE_URL: t.url,
      REFSYNC_ENVIRONMENT: 'usage-index',
      REFSYNC_LISTS: 'charge_codes',
      REFSYNC_CONFIG: usageConfig([
        { list: 'charge_codes', column: 'public.facts_large.charge_code', at: 'shipped_at' },
        { list: 'charge_codes', column: 'public.facts_indexed.charge_code' },
      ]),
    });
    const advice = /usage column public\.facts_large\.charge_code has no index that begins with it: .* reads the whole table \(6\d MiB\)/;
    const statement = 'CREATE INDEX ON public.facts_large (charge_code, shipped_at)';

    const sync = await runCli(['sync'], { env });
    expect(sync.code).toBe(0);
    expect(sync.stderr).toMatch(advice);
    expect(sync.stderr).toContain(statement);
    expect(sync.stderr).not.toContain('facts_indexed');

    const status = await runCli(['status'], { env: { ...env, COLUMNS: '400' } });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`add one with ${statement}`);
    const json = await runCli(['status', '--json'], { env });
    const parsed = JSON.parse(json.stdout) as { unindexed_usage: Array<{ column: string; bytes: number; createIndex: string }> };
    expect(parsed.unindexed_usage.map((u) => [u.column, u.createIndex])).toEqual([['public.facts_large.charge_code', statement]]);
    expect(parsed.unindexed_usage[0]!.bytes).toBeGreaterThanOrEqual(UNINDEXED_USAGE_MIN_BYTES);

    const worker = spawnCli(['worker'], {
      ...env,
      REDIS_URL: inject('redisUrl'),
      REFSYNC_QUEUE_PREFIX: testQueuePrefix(),
      REFSYNC_HTTP_PORT: '0',
      LOG_LEVEL: 'info',
    });
    await waitFor(() => worker.output().stderr.includes('"worker started"'), 'the worker to start');
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    const warned = worker
      .output()
      .stderr.split('\n')
      .filter((line) => line.includes('has no index'))
      .map((line) => JSON.parse(line) as { level: number; column: string; createIndex: string; msg: string });
    expect(warned.map((w) => [w.level, w.column, w.createIndex])).toEqual([[40, 'public.facts_large.charge_code', statement]]);
    expect(warned[0]!.msg).toMatch(advice);

    // Once the index is there, nothing is said.
    await t.db.query(statement);
    const after = await runCli(['sync'], { env });
    expect(after.code).toBe(0);
    expect(after.stderr).not.toContain('has no index');
  });
});

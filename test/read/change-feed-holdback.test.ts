// Held back, and told. A real write transaction left open on a second connection
// holds the change feed back: `refsync status --json`, the worker's refsync_change_feed_held_seconds
// and refdata_reader all say so and name the session, and all go back to 0 when it commits. Run on a
// private Postgres (autovacuum off) so that no other session in the cluster writes meanwhile and the
// answers are exact. What people read past a minute is tested apart, on rows made up for it: a
// transaction cannot be made to have started a minute ago without waiting that minute.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { HOLDBACK_NOTICE_SECONDS, holdbackWorthNoting, holdbackNotice, type FeedHoldback } from '../../src/read/change-feed-holdback.ts';
import { feedHoldbackSection } from '../../src/server/feed-holdback-section.ts';
import { WorkerMetrics } from '../../src/server/metrics.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { runCli } from '../helpers/cli.ts';
import { canStartPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../faults/servers.ts';

if (!canStartPrivatePostgres) console.warn('[change feed held] Postgres part skipped: needs root and Debian postgresql-15 (initdb)');

const since = new Date('2026-11-28T05:00:00Z');
const idleRow: FeedHoldback = { held_seconds: 1020.4, pid: 4242, application_name: 'nightly-etl', state: 'idle in transaction', since };

describe('what people read of a held feed', () => {
  it('is said only past HOLDBACK_NOTICE_SECONDS (a sync holds the feed for seconds), and never for an unknown age', () => {
    expect(HOLDBACK_NOTICE_SECONDS).toBe(60);
    expect(holdbackWorthNoting({ ...idleRow, held_seconds: 60 })).toBe(false);
    expect(holdbackWorthNoting({ ...idleRow, held_seconds: 60.5 })).toBe(true);
    expect(holdbackWorthNoting({ ...idleRow, held_seconds: null })).toBe(false);
    expect(holdbackWorthNoting({ held_seconds: 0, pid: null, application_name: null, state: null, since: null })).toBe(false);
    expect(holdbackWorthNoting(null)).toBe(false);
  });

  it('names the session, how long, and what ends it', () => {
    expect(holdbackNotice({ ...idleRow, held_seconds: 1020.4 })).toBe(
      'change feed held back for 17 min by pid 4242 (nightly-etl, idle in transaction, since 2026-11-28 05:00:00Z): ' +
        'downstream jobs get no newer change until it ends; have its client commit or roll back, or end the session with ' +
        'select pg_terminate_backend(4242). See docs/production.md, "A held change feed".',
    );
    expect(holdbackNotice({ ...idleRow, held_seconds: 61, application_name: '' })).toContain('for 61 s by pid 4242 (idle in transaction, since');
    const prepared = { held_seconds: 9000, pid: null, application_name: 'prepared transaction tx-7', state: 'prepared', since };
    expect(holdbackNotice(prepared)).toBe(
      'change feed held back for 2 h by prepared transaction tx-7 (since 2026-11-28 05:00:00Z): downstream jobs get no newer ' +
        'change until it ends; settle it (COMMIT PREPARED or ROLLBACK PREPARED, as its transaction manager would). ' +
        'See docs/production.md, "A held change feed".',
    );
  });

  it('on the status page: the same, with the application name as text; nothing while the feed flows', () => {
    const markup = '<script>alert(1)</script>etl';
    const section = feedHoldbackSection({ ...idleRow, application_name: markup }).text;
    expect(section).toContain('<section id="feed-held" class="attention">');
    expect(section).toContain('<h2>Change feed held back for 17 min</h2>');
    expect(section).toContain('pid 4242 (&lt;script&gt;alert(1)&lt;/script&gt;etl, idle in transaction, since 2026-11-28 05:00:00Z)');
    expect(section).not.toContain('<script>');
    expect(section).toContain('<code class="command">select pg_terminate_backend(4242);</code>');
    expect(feedHoldbackSection({ ...idleRow, held_seconds: 30 }).text).toBe('');
    expect(feedHoldbackSection(null).text).toBe('');
  });

  it('on a status page without the dashboard login: how long, never which session', () => {
    const section = feedHoldbackSection(idleRow, false).text;
    expect(section).toContain('<h2>Change feed held back for 17 min</h2>');
    expect(section).toContain('behind the dashboard');
    for (const hidden of ['4242', 'nightly-etl', 'idle in transaction', '2026-11-28']) expect(section).not.toContain(hidden);
  });
});

describe.skipIf(!canStartPrivatePostgres)('a real open write transaction holds the feed back (private Postgres)', () => {
  let server: PrivatePostgres;
  let db: Database;
  let metrics: WorkerMetrics;
  const urlAs = (role: string) => server.url.replace('postgres@', `${role}@`);

  beforeAll(async () => {
    server = await startPrivatePostgres();
    db = await openDatabase({ url: server.url, poolSize: 2 });
    // Autovacuum's ANALYZE takes a transaction id too: off, so only this file's sessions write.
    await db.query('alter system set autovacuum = off');
    await db.query('select pg_reload_conf()');
    await db.query('create role feed_reader login in role refdata_reader');
    await db.query('create role feed_owner login');
    metrics = new WorkerMetrics({ db, probeDatabase: () => db.probe(), sources: [], queueCounts: async () => ({}), logger: silentLogger });
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  const statusFeed = async () => {
    const r = await runCli(['status', '--json'], { env: { DATABASE_URL: server.url } });
    expect(r.stderr).toBe('');
    return (JSON.parse(r.stdout) as { change_feed: FeedHoldback & { since: string | null } }).change_feed;
  };
  const gauge = async () => Number(/^refsync_change_feed_held_seconds (\S+)$/m.exec(await metrics.text())?.[1]);
  const heldAs = async (role: string) => {
    const client = new pg.Client({ connectionString: urlAs(role) });
    await client.connect();
    try {
      return (await client.query<FeedHoldback>('select * from refdata.change_feed_held()')).rows[0]!;
    } finally {
      await client.end();
    }
  };

  /** A second connection that began a transaction and took a transaction id, then went idle. */
  async function openHolder() {
    const holder = new pg.Client({ connectionString: server.url, application_name: 'nightly-etl' });
    await holder.connect();
    await holder.query('begin');
    const { rows } = await holder.query<{ pid: number; xact_start: Date }>(
      'select pg_backend_pid() as pid, now() as xact_start, pg_current_xact_id() is not null as wrote',
    );
    return { holder, ...rows[0]! };
  }

  it('status --json, the metric and refdata_reader name the idle session; after its commit all say 0', async () => {
    expect(await statusFeed()).toEqual({ held_seconds: 0, pid: null, application_name: null, state: null, since: null });
    const { holder, pid, xact_start } = await openHolder();
    try {
      const held = await statusFeed();
      expect(held).toMatchObject({ pid, application_name: 'nightly-etl', state: 'idle in transaction', since: xact_start.toISOString() });
      expect(held.held_seconds).toBeGreaterThan(0);
      expect(await gauge()).toBeGreaterThan(0);
      // The reader role may not see a superuser's session in pg_stat_activity: the function (run as
      // the owner of refdata) tells it that the feed is held, and nothing the view hides from it.
      expect(await heldAs('feed_reader')).toEqual({ held_seconds: null, pid: null, application_name: null, state: null, xact_start: null });
    } finally {
      await holder.query('commit');
      await holder.end();
    }
    expect(await statusFeed()).toEqual({ held_seconds: 0, pid: null, application_name: null, state: null, since: null });
    expect(await gauge()).toBe(0);
  });

  it('a read-only role holds the feed by taking a transaction id, and sees its own session named', async () => {
    const reader = new pg.Client({ connectionString: urlAs('feed_reader'), application_name: 'analyst-notebook' });
    await reader.connect();
    try {
      await reader.query('begin');
      const { rows } = await reader.query<{ pid: number }>('select pg_backend_pid() as pid, pg_current_xact_id()');
      expect(await heldAs('feed_reader')).toMatchObject({ pid: rows[0]!.pid, application_name: 'analyst-notebook', state: 'idle in transaction' });
      expect((await statusFeed()).pid).toBe(rows[0]!.pid);
    } finally {
      await reader.query('rollback');
      await reader.end();
    }
  });

  it('owned by a role that may not see the holder: held for how long unknown (null, NaN), never 0', async () => {
    await db.query('alter function refdata.change_feed_held() owner to feed_owner');
    const { holder, pid } = await openHolder();
    try {
      const hidden = await statusFeed();
      expect(hidden).toEqual({ held_seconds: null, pid, application_name: 'nightly-etl', state: null, since: null });
      expect(await gauge()).toBeNaN();
      // docs/production.md: grant refsync's role pg_read_all_stats and the age is known again.
      await db.query('grant pg_read_all_stats to feed_owner');
      expect((await statusFeed()).held_seconds).toBeGreaterThan(0);
    } finally {
      await holder.query('commit');
      await holder.end();
      await db.query('alter function refdata.change_feed_held() owner to postgres');
    }
  });
});

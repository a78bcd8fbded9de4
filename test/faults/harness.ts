// Shared by the fault cases: a source of its own per case (its own environment label), a client
// that logs into this file's captured logs, the sandbox's state before and after a change, and an
// end-of-file check that no secret reached those logs.
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, expect } from 'vitest';
import { getListDefinition, targetsFor, type Target } from '../../src/catalog/catalog.ts';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import type { SourceConfig } from '../../src/config/types.ts';
import { QUEUE_NAME } from '../../src/queue/redis/names.ts';
import type { Database } from '../../src/db/database.ts';
import { DEFAULT_ACCOUNTS, type Sandbox } from '../../src/sandbox/index.ts';
import { runSync, type RunResult } from '../../src/sync/run/run-sync.ts';
import type { TargetOutcome } from '../../src/sync/sync-target.ts';
import { normalizeEntry } from '../../src/sync/collect/collect.ts';
import { createUpstreamClient, type UpstreamClient, type UpstreamClientOptions } from '../../src/upstream/index.ts';
import { captureLogs } from '../helpers/logs.ts';
import { sandboxEnv, sandboxSource } from '../helpers/source.ts';
import { startRedisServer, testQueue, waitFor, testQueuePrefix } from '../queue/helpers.ts';
import { watchAuthorization } from '../upstream/fixtures.ts';
import { expectConsistentHistory, expectWholeStates, footprint, servedState, type SourceState } from './invariants.ts';

/** Every client and dispatcher of this file logs here (trace, no redaction). */
export const fileLogs = captureLogs('trace');
/** Secrets that must never appear in fileLogs: the accounts', whatever a test adds, every Authorization value sent. */
export const secrets = new Set<string>(DEFAULT_ACCOUNTS.flatMap((a) => [a.password, ...(a.apiKey ? [a.apiKey] : [])]));
const sent = watchAuthorization();
const clients: UpstreamClient[] = [];

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  sent.stop();
  const text = fileLogs.text();
  for (const value of [...secrets, ...sent.values]) {
    if (value.length < 6) continue;
    expect(text.includes(value), `a secret (${value.slice(0, 3)}…) appears in the captured logs`).toBe(false);
  }
  expect(text).not.toMatch(/authorization"?\s*:\s*"?(Token|Bearer|Basic|APIkey) /i);
});

let counter = 0;
/** An environment label of its own, so each case's rows and alerts are its own. */
export function uniqueEnvironment(prefix: string): string {
  return `${prefix}-${process.pid}-${++counter}`;
}

/** Short limits: failure paths finish fast; behaviour, not timing, is asserted. */
export const fastClient: Partial<UpstreamClientOptions> = {
  retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 50 },
  timeouts: { connectMs: 2000, headersMs: 2000, bodyMs: 2000 },
};

export interface FaultSource {
  source: SourceConfig;
  client: UpstreamClient;
  sync(extra?: { acceptRemovals?: boolean; lists?: ListKey[] }): Promise<RunResult>;
  /** What the sandbox serves now, per target. */
  served(): SourceState;
  target(listKey: ListKey, variant?: string): Target;
  /** The outcome of one list in a run. */
  outcome(run: RunResult, listKey: ListKey, variant?: string): TargetOutcome;
}

export const SMALL_LISTS = 'shipment_modes,equipment_types,piece_types';

/** A source on the sandbox, its own environment, a few small lists unless REFSYNC_LISTS says otherwise. */
export function faultSource(sb: Sandbox, db: Database, env: Record<string, string> = {}, clientOptions: Partial<UpstreamClientOptions> = {}): FaultSource {
  const source = sandboxSource(sb, {
    REFSYNC_ENVIRONMENT: uniqueEnvironment('faults'),
    REFSYNC_LISTS: SMALL_LISTS,
    REFSYNC_ALERT_ON: 'added,removed,modified,reappeared,schema_changed,held,failed',
    ...env,
  });
  return sourceFixture(source, db, clientOptions, sb);
}

/** The pipeline for any configured source (a sandbox, or a rogue local server standing in for the upstream). */
export function sourceFixture(source: SourceConfig, db: Database, clientOptions: Partial<UpstreamClientOptions> = {}, sb?: Sandbox): FaultSource {
  const client = createUpstreamClient(source, fileLogs.logger, { ...fastClient, ...clientOptions });
  clients.push(client);
  return {
    source,
    client,
    sync(extra = {}) {
      const options: Parameters<typeof runSync>[0] = {
        db,
        sources: [source],
        clientFor: () => client,
        trigger: 'cli',
        logger: fileLogs.logger,
        acceptRemovals: extra.acceptRemovals ?? false,
      };
      if (extra.lists) options.lists = extra.lists;
      return runSync(options).then((r) => r[0]!);
    },
    served: () => {
      if (!sb) throw new Error('served(): this source is not a sandbox');
      return servedState(sb, source);
    },
    target(listKey, variant = '') {
      const t = targetsFor(source).find((x) => x.list.key === listKey && x.variant === variant);
      if (!t) throw new Error(`no target ${listKey}/${variant}`);
      return t;
    },
    outcome(run, listKey, variant = '') {
      const o = run.outcomes.find((x) => x.target.list.key === listKey && x.target.variant === variant);
      if (!o) throw new Error(`no outcome for ${listKey}/${variant}`);
      return o;
    },
  };
}

let changeSeq = 0;
/** Changes a list in the sandbox: one entry modified, one added. Returns nothing; read served() after. */
export function changeList(sb: Sandbox, listKey: ListKey): void {
  const list = getListDefinition(listKey);
  const entries = sb.control.getEntries(listKey) as Record<string, unknown>[];
  const first = entries[0]!;
  const key = normalizeEntry(list, first, 0).entryKey;
  const n = ++changeSeq;
  sb.control.modifyEntry(listKey, key, { description: `changed by a fault case ${n}` });
  const added: Record<string, unknown> = { ...first, description: `added by a fault case ${n}` };
  for (const field of list.keyFields) {
    added[field] = typeof first[field] === 'number' ? 900_000 + n : `FLT${n}`;
  }
  if ('id' in added && !list.keyFields.includes('id')) added.id = 900_000 + n;
  sb.control.addEntry(listKey, added);
}

/**
 * The common shape of a "list fails, its data untouched" case: after the faulted run every list
 * is one whole served state, the faulted list the old one; history consistent. Then, faults
 * cleared, the next run applies the new state, and a further run adds nothing.
 */
export async function expectFailedThenRecovered(
  sb: Sandbox,
  db: Database,
  fx: FaultSource,
  faulted: ListKey,
  before: SourceState,
  run: RunResult,
  expectCode: string,
): Promise<TargetOutcome> {
  const after = fx.served();
  const outcome = fx.outcome(run, faulted);
  expect(outcome.status, outcome.error).toBe('failed');
  expect(outcome.errorCode).toBe(expectCode);
  expect(run.status).toBe(fx.source.lists.length > 1 ? 'partial' : 'failed');
  const matched = await expectWholeStates(db, fx.source, [before, after]);
  expect(matched.get(`${faulted}/`), `${faulted} must keep the state before the fault`).toBe(0);
  await expectConsistentHistory(db, fx.source);

  sb.control.clearFaults();
  const again = await fx.sync();
  expect(again.status, again.outcomes.map((o) => o.error).join('; ')).toBe('succeeded');
  const recovered = await expectWholeStates(db, fx.source, [after]);
  expect([...recovered.values()].every((i) => i === 0)).toBe(true);
  await expectConsistentHistory(db, fx.source);
  await expectRerunAddsNothing(db, fx);
  return outcome;
}

/** A further run on unchanged data adds no entry, change row or alert. */
export async function expectRerunAddsNothing(db: Database, fx: FaultSource): Promise<void> {
  const before = await footprint(db, fx.source.environment);
  const run = await fx.sync();
  expect(run.status).toBe('succeeded');
  expect(
    run.outcomes.every((o) => o.status === 'unchanged'),
    run.outcomes.map((o) => `${o.target.list.key}:${o.status}`).join(','),
  ).toBe(true);
  expect(await footprint(db, fx.source.environment)).toEqual(before);
  await expectConsistentHistory(db, fx.source);
}

/**
 * The environment of a `refsync worker` process that syncs exactly this sandbox source (same
 * environment label, lists and alert kinds); `extra` adds DATABASE_URL, REDIS_URL, the queue prefix.
 */
export function workerEnv(sb: Sandbox, source: SourceConfig, extra: Record<string, string>): Record<string, string> {
  return sandboxEnv(sb, {
    REFSYNC_ENVIRONMENT: source.environment,
    REFSYNC_LISTS: source.lists.join(','),
    REFSYNC_ALERT_ON: source.alertOn.join(','),
    ...extra,
  });
}

/**
 * What the worker-process cases run on: a Redis server of the case's own, a fresh queue prefix with
 * a producer-side handle, and the environment of worker processes syncing `source` through them.
 */
export async function privateWorkerQueue(sb: Sandbox, source: SourceConfig, databaseUrl: string) {
  const redis = await startRedisServer();
  const prefix = testQueuePrefix();
  const queue = testQueue(prefix, redis.url);
  const env = workerEnv(sb, source, { DATABASE_URL: databaseUrl, REDIS_URL: redis.url, REFSYNC_QUEUE_PREFIX: prefix });
  return { redis, prefix, queue, env };
}

/** Output of a worker process (or any CLI child) holds none of the known secrets. */
export function expectNoSecretsIn(proc: { output(): { stdout: string; stderr: string } }): void {
  const { stdout, stderr } = proc.output();
  for (const s of secrets) expect(`${stdout}${stderr}`.includes(s), 'a secret in the worker output').toBe(false);
}

/** The stall counter BullMQ keeps on a job's hash (`stc`): how often the job was recovered as stalled. */
export async function stalledCount(redisUrl: string, prefix: string, jobId: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    return Number((await redis.hget(`${prefix}:${QUEUE_NAME}:${jobId}`, 'stc')) ?? 0);
  } finally {
    redis.disconnect();
  }
}

/**
 * What the worker cases read from Postgres to find their kill points and check the outcome: run
 * records by slot, a run's snapshots, alert kinds, worker backends waiting on a lock, and a session
 * of the test's own holding a lock. `at` gives the test database (valid inside tests only).
 */
export function workerProbes(at: () => { db: Database; url: string }) {
  const db = () => at().db;
  const runOf = async (source: SourceConfig, slot: string) => {
    const { rows } = await db().query<{ id: number; status: string }>('select id, status from refdata.sync_runs where source = $1 and slot = $2', [
      source.name,
      slot,
    ]);
    return rows[0] ? { id: Number(rows[0].id), status: rows[0].status } : undefined;
  };
  return {
    runOf,
    /** Waits until the slot's run is no longer running, and returns it. */
    async runFinished(source: SourceConfig, slot: string, what: string, timeoutMs: number) {
      return waitFor(
        async () => {
          const r = await runOf(source, slot);
          return r && r.status !== 'running' && r;
        },
        what,
        timeoutMs,
        250,
      );
    },
    async snapshotsOfRun(runId: number) {
      const { rows } = await db().query<{ id: number; run_id: number; list_key: string; status: string; changed: boolean }>(
        'select id, run_id, list_key, status, changed from refdata.snapshots where run_id = $1 order by id',
        [runId],
      );
      return rows;
    },
    async alertKinds(snapshotId: number): Promise<string[]> {
      const { rows } = await db().query<{ kind: string }>('select kind from refdata.alerts where snapshot_id = $1 order by kind', [snapshotId]);
      return rows.map((r) => r.kind);
    },
    /** Backends of worker processes in this database waiting for a lock, filtered by `where` (on pg_locks l, pg_stat_activity a). */
    async workerBackendsWaiting(where: string): Promise<number> {
      const { rows } = await db().query<{ n: number }>(
        `select count(distinct a.pid)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
         where not l.granted and a.datname = current_database() and a.application_name = 'refsync-worker' and (${where})`,
      );
      return rows[0]!.n;
    },
    /** Every backend of a killed worker has ended (each notices the closed socket at its next read). */
    async noWorkerBackends(): Promise<boolean> {
      const { rows } = await db().query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'refsync-worker'",
      );
      return rows[0]!.n === 0;
    },
    /** A session of the test's own holding a lock inside an open transaction, until release (or the file's end). */
    async holdLock(sql: string, params: unknown[] = []): Promise<{ release(): Promise<void> }> {
      const client = new pg.Client({ connectionString: at().url, application_name: 'refsync-faults-locker' });
      await client.connect();
      await client.query('begin');
      await client.query(sql, params);
      let released = false;
      const release = async () => {
        if (released) return;
        released = true;
        await client.query('rollback').catch(() => undefined);
        await client.end().catch(() => undefined);
      };
      lockers.push(release);
      return { release };
    },
  };
}
const lockers: Array<() => Promise<void>> = [];
afterAll(async () => {
  await Promise.all(lockers.splice(0).map((release) => release()));
});

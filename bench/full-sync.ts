// The full sync that P1 and P2 measure: every list and variant of one source, all targets at once,
// from the sandbox at a fixed latency. Fetch time per target is measured from outside the pipeline
// by wrapping the page source; database time is the target's total minus its fetch.
import { targetName, targetsFor } from '../src/catalog/catalog.ts';
import type { SourceConfig } from '../src/config/types.ts';
import type { Database } from '../src/db/database.ts';
import { runSync } from '../src/sync/run/run-sync.ts';
import type { ListBatch } from '../src/upstream/list-batch.ts';
import type { PageSource, TargetOutcome } from '../src/sync/sync-target.ts';
import { createUpstreamClient } from '../src/upstream/index.ts';
import type { UpstreamClient } from '../src/upstream/index.ts';
import { benchSource, countRows, ALL_CHARGE_CODE_VERSIONS, type BenchSandbox } from './lib.ts';

export interface TargetTiming {
  target: string;
  totalMs: number;
  fetchMs: number;
  /** total - fetch: connection wait, normalising/hash finish and the apply transaction. */
  dbMs: number;
  pages: number;
  status: string;
}

export interface FullSyncResult {
  wallMs: number;
  targets: number;
  maxPages: number;
  entries: number;
  requests: number;
  logins: number;
  timings: TargetTiming[];
  outcomes: TargetOutcome[];
}

/** Times each target's fetch: from its first page request until its last page is read. */
class TimedPages implements PageSource {
  readonly fetchMs = new Map<string, number>();
  readonly #inner: PageSource;
  constructor(inner: PageSource) {
    this.#inner = inner;
  }

  async *pages(request: Parameters<PageSource['pages']>[0]): AsyncIterable<ListBatch> {
    const key = `${request.path}|${request.serviceVersion ?? ''}`;
    const started = performance.now();
    let consumer = 0;
    for await (const page of this.#inner.pages(request)) {
      const handedOut = performance.now();
      yield page;
      // Time the consumer spends on a page (normalising, spilling) is not fetch time.
      consumer += performance.now() - handedOut;
    }
    this.fetchMs.set(key, performance.now() - started - consumer);
  }
}

export function fullSource(sandbox: Pick<BenchSandbox, 'url' | 'caFile'>, extra: Record<string, string> = {}): SourceConfig {
  return benchSource(sandbox, { REFSYNC_CHARGE_CODE_VERSIONS: ALL_CHARGE_CODE_VERSIONS, ...extra });
}

export function targetCount(source: SourceConfig): number {
  return targetsFor(source).length;
}

/**
 * One sync as `refsync sync` does it, with a fresh upstream client (so the login is part of it) on
 * the given database pool. `clients` > 1 spreads the targets over that many clients (each with its
 * own login and connection pool), to show what a larger connection limit per client would give.
 */
export async function timedFullSync(
  db: Database,
  sandbox: BenchSandbox,
  source: SourceConfig,
  options: { concurrency: number; clients?: number },
): Promise<FullSyncResult> {
  const clients: UpstreamClient[] = Array.from({ length: options.clients ?? 1 }, () => createUpstreamClient(source));
  const timed = clients.map((c) => new TimedPages(c));
  let next = 0;
  const byPath = new Map<string, TimedPages>();
  const spread: PageSource = {
    pages(request) {
      const key = `${request.path}|${request.serviceVersion ?? ''}`;
      let source = byPath.get(key);
      if (!source) byPath.set(key, (source = timed[next++ % timed.length]!));
      return source.pages(request);
    },
  };
  await sandbox.control('resetRequestLog');
  try {
    const started = performance.now();
    const [result] = await runSync({ db, sources: [source], clientFor: () => spread, trigger: 'cli', concurrency: options.concurrency });
    const wallMs = performance.now() - started;
    const log = await sandbox.requestLog();
    const outcomes = result!.outcomes;
    const failed = outcomes.filter((o) => o.status === 'failed' || o.status === 'unavailable' || o.status === 'held');
    if (failed.length) throw new Error(`sync failed for ${failed.map((o) => `${targetName(o.target)}: ${o.error}`).join('; ')}`);
    const timings = outcomes.map((o): TargetTiming => {
      const key = `${o.target.path}|${o.target.serviceVersion ?? ''}`;
      const fetchMs = byPath.get(key)?.fetchMs.get(key) ?? 0;
      return {
        target: targetName(o.target),
        totalMs: o.durationMs,
        fetchMs,
        dbMs: o.durationMs - fetchMs,
        pages: o.pages,
        status: o.status,
      };
    });
    return {
      wallMs,
      targets: outcomes.length,
      maxPages: Math.max(...outcomes.map((o) => o.pages)),
      entries: outcomes.reduce((n, o) => n + o.entryCount, 0),
      requests: log.length,
      logins: log.filter((e) => e.path === '/v2/auth/token/').length,
      timings,
      outcomes,
    };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

/**
 * The same fetches with no database at all: a fresh client (login, new connections) reading every
 * target's pages at once and dropping them. The floor a sync can reach on this machine, since the
 * client and the sandbox share its cores.
 */
export async function timedFetchOnly(source: SourceConfig, concurrency: number): Promise<number> {
  const client = createUpstreamClient(source);
  try {
    const targets = targetsFor(source);
    const started = performance.now();
    let next = 0;
    const lane = async () => {
      while (next < targets.length) {
        const t = targets[next++]!;
        const request = { basePath: t.list.basePath, path: t.path, ...(t.serviceVersion ? { serviceVersion: t.serviceVersion } : {}) };
        for await (const page of client.pages(request)) void page;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, targets.length) }, lane));
    return performance.now() - started;
  } finally {
    await client.close();
  }
}

/** Rows in the history tables: what a sync wrote, by difference. */
export async function writtenRows(db: Database): Promise<{ entries: number; changes: number; snapshots: number }> {
  const [entries, changes, snapshots] = await Promise.all([countRows(db, 'entries'), countRows(db, 'entry_changes'), countRows(db, 'snapshots')]);
  return { entries, changes, snapshots };
}

/** The network bound: login, then the longest target's pages one after another, each costing the latency. */
export function networkBoundMs(latencyMs: number, maxPages: number, logins: number): number {
  return (maxPages + (logins > 0 ? 1 : 0)) * latencyMs;
}

export function summarizeTimings(timings: TargetTiming[]): string {
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const max = (xs: number[]) => Math.max(...xs);
  const fetch = timings.map((t) => t.fetchMs);
  const db = timings.map((t) => t.dbMs);
  return `per target: fetch avg ${avg(fetch).toFixed(1)} ms (max ${max(fetch).toFixed(1)}), database avg ${avg(db).toFixed(1)} ms (max ${max(db).toFixed(1)})`;
}

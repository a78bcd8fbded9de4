// The worker's Prometheus metrics, in a Registry of their own (never prom-client's global one, so
// two workers in one test process do not collide). Counters and histograms are per process;
// Prometheus sums them across workers. What every worker must report alike (last success per target,
// entries, queue depth, outbox backlog) is read from Postgres and Redis at scrape time, so any one
// worker's /metrics tells the truth about the whole deployment.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SourceConfig } from '../config/types.ts';
import type { Queryable } from '../db/database.ts';
import type { Logger } from '../util/logger.ts';
import { registerBuildInfo, registerFeedHoldbackGauge, registerTargetHealthGauges } from './operator-gauges.ts';
import { targetGauges } from './target-gauges.ts';
import { registerDatabaseGauges } from './database-gauges.ts';
import { pendingAlertCount, lastOkSnapshots } from './metrics-sql.ts';

/** The last ok snapshot of a target, as the per-target gauges read it at scrape time. */
interface LastOkRow {
  environment: string;
  list_key: string;
  variant: string;
  at: number;
  entry_count: number | null;
}

/** What the pipeline reports for one target, reduced to what metrics need. */
export interface TargetMetricsInput {
  source: string;
  list: string;
  variant: string;
  status: string;
  durationMs: number;
  counts: Record<string, number>;
  errorCode?: string;
}

export interface UpstreamRequestInfo {
  endpoint: string;
  method: string;
  status: number | null;
  durationMs: number;
  code?: string;
}

export interface MetricsSources {
  db: Queryable;
  /** Whether Postgres gives a new connection now (Database.probe), for refsync_database_up. */
  probeDatabase: () => Promise<void>;
  sources: SourceConfig[];
  /** Job counts by state (waiting, active, delayed, failed, ...). */
  queueCounts(): Promise<Record<string, number>>;
  logger: Logger;
  /**
   * Whether per-process series (histograms, counters) carry the `source` label. Off, they are summed
   * over sources, so 1,000 sources do not multiply them; the per-target gauges keep it (docs/production.md).
   */
  sourceLabel?: boolean;
}

export class WorkerMetrics {
  readonly registry = new Registry();
  readonly #syncDuration: Histogram<'source' | 'list' | 'variant' | 'status'>;
  readonly #changes: Counter<'source' | 'list' | 'kind'>;
  readonly #failures: Counter<'source' | 'list' | 'code'>;
  readonly #jobs: Counter<'name' | 'outcome'>;
  readonly #upstream: Histogram<'source' | 'endpoint' | 'method' | 'status'>;
  /** The `source` label of a per-process series, or none when REFSYNC_METRICS_SOURCE_LABEL is off. */
  readonly #source: (name: string) => { source?: string };

  constructor(from: MetricsSources) {
    const registers = [this.registry];
    const withSource = from.sourceLabel !== false;
    this.#source = withSource ? (source) => ({ source }) : () => ({});
    const sourceLabel = withSource ? (['source'] as const) : [];
    // Unprefixed (process_cpu_seconds_total, nodejs_*), so stock Node.js dashboards match.
    collectDefaultMetrics({ register: this.registry });
    registerBuildInfo(this.registry);
    this.#syncDuration = new Histogram({
      name: 'refsync_sync_duration_seconds',
      help: 'Time to sync one target (fetch, diff, apply), by outcome status.',
      labelNames: [...sourceLabel, 'list', 'variant', 'status'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900],
      registers,
    });
    this.#changes = new Counter({
      name: 'refsync_entry_changes_total',
      help: 'Entry changes applied, by kind (added, removed, modified, reappeared, reshaped); a held snapshot applies none.',
      labelNames: [...sourceLabel, 'list', 'kind'],
      registers,
    });
    this.#failures = new Counter({
      name: 'refsync_sync_failures_total',
      help: 'Target syncs that ended failed, unavailable or held, by error code.',
      labelNames: [...sourceLabel, 'list', 'code'],
      registers,
    });
    this.#jobs = new Counter({
      name: 'refsync_jobs_total',
      help: 'Queue jobs finished by this process, by job name and outcome (completed, failed, retried).',
      labelNames: ['name', 'outcome'],
      registers,
    });
    this.#upstream = new Histogram({
      name: 'refsync_upstream_request_duration_seconds',
      help: 'HTTP exchanges with the upstream service; status is "none" when no response came.',
      labelNames: [...sourceLabel, 'endpoint', 'method', 'status'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });

    registerDeploymentGauges(this.registry, from);
  }

  target(input: TargetMetricsInput): void {
    const source = this.#source(input.source);
    this.#syncDuration.observe({ ...source, list: input.list, variant: input.variant, status: input.status }, input.durationMs / 1000);
    // Only an applied snapshot changed entries: a held one carries the changes it would have made.
    if (input.status === 'changed') {
      for (const [kind, n] of Object.entries(input.counts)) {
        if (n > 0) this.#changes.inc({ ...source, list: input.list, kind }, n);
      }
    }
    if (input.status === 'failed' || input.status === 'unavailable' || input.status === 'held') {
      this.#failures.inc({ ...source, list: input.list, code: input.errorCode ?? input.status });
    }
  }

  job(name: string, outcome: 'completed' | 'failed' | 'retried'): void {
    this.#jobs.inc({ name, outcome });
  }

  upstreamRequest(source: string, info: UpstreamRequestInfo): void {
    this.#upstream.observe(
      { ...this.#source(source), endpoint: info.endpoint, method: info.method, status: info.status === null ? 'none' : String(info.status) },
      info.durationMs / 1000,
    );
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * The gauges every worker reports alike, read from Redis and Postgres at scrape time: queue depth,
 * outbox backlog, and per target its last success, entries, hold and failures in a row.
 */
function registerDeploymentGauges(registry: Registry, from: MetricsSources): void {
  const registers = [registry];
  const log = from.logger;
  const database = registerDatabaseGauges(registry, from.probeDatabase);
  new Gauge({
    name: 'refsync_queue_jobs',
    help: 'Jobs in the queue by state (shared by every worker).',
    labelNames: ['state'],
    registers,
    async collect() {
      this.reset();
      try {
        for (const [state, n] of Object.entries(await from.queueCounts())) this.set({ state }, n);
      } catch (err) {
        log.debug({ err: (err as Error).message }, 'metrics: queue counts unavailable');
      }
    },
  });
  new Gauge({
    name: 'refsync_alerts_pending',
    help: 'Alert outbox rows not yet delivered (refdata.alerts where state = pending).',
    registers,
    async collect() {
      try {
        const { rows } = await from.db.query<{ n: number }>(pendingAlertCount);
        this.set(rows[0]?.n ?? 0);
      } catch (err) {
        log.debug({ err: (err as Error).message }, 'metrics: outbox backlog unavailable');
      }
    },
  });
  const sourceOf = new Map(from.sources.map((s) => [s.environment, s.name]));
  // Both gauges read refdata.target_last_ok, one row per target kept by a trigger: a scrape costs the
  // same after a year of hourly snapshots as after one (docs/performance.md).
  const lastOk = targetGauges<LastOkRow>(
    registry,
    sourceOf,
    log,
    database.tracked(async () => {
      const { rows } = await from.db.query<LastOkRow>(lastOkSnapshots);
      return rows;
    }),
  );
  lastOk('refsync_last_success_timestamp_seconds', 'When each target last synced ok (unix time); alert on time() minus this.', (r) => r.at, true);
  // Errors are reported once, by the gauge above.
  lastOk('refsync_entries', 'Entries in the last ok snapshot of each target.', (r) => r.entry_count, false);
  registerTargetHealthGauges(registry, from.db, sourceOf, log);
  registerFeedHoldbackGauge(registry, from.db, log);
}

import type { ListKey } from '../catalog/list-keys.ts';
import type { RetentionConfig } from './retention.ts';
import type { SourceLimits } from './source-limits.ts';
import type { SchemaChanges } from './schema-changes.ts';

export type ApiKeyScheme = 'apikey' | 'bearer' | 'basic';
export const webhookFormats = ['json', 'slack'] as const;
export type WebhookFormat = (typeof webhookFormats)[number];
export const alertKinds = [
  'added',
  'removed',
  'modified',
  'reappeared',
  'schema_changed',
  'nonconforming',
  'held',
  'failed',
  'used_code_changed',
  'run_completed',
] as const;
export type AlertKind = (typeof alertKinds)[number];

/** Where catalog entries can be overridden per deployment (the real service's base paths are not certain). */
export interface ListOverride {
  basePath?: string;
  path?: string;
}

/** A column of the user's own data that holds codes of a list (REFSYNC_CONFIG `usage`). */
export interface UsageSource {
  list: ListKey;
  /** The list's variant the codes belong to; absent: the first one a source syncs. */
  variant?: string;
  /** schema.table.column, holding the code as text. */
  column: string;
  /** A timestamp column of the same table: facts older than recentDays are not in use. */
  at?: string;
  /** A column of the same table whose top values an impact names. */
  groupBy?: string;
  recentDays: number;
  /** Only for the source of this environment; every source when absent. */
  environment?: string;
}

/** A usage column as one source applies it: its variant resolved. */
export interface UsageColumn extends UsageSource {
  variant: string;
}

export interface WebhookConfig {
  url: string;
  secret?: string;
  format: WebhookFormat;
  /** Loopback, private and link-local targets are refused unless allowed (SSRF guard). */
  allowPrivate: boolean;
}

/** One upstream account in one environment: what a scheduler and a sync run are made for. */
export interface SourceConfig extends Partial<SourceLimits> {
  /** Stable id of the source (scheduler id); defaults to the environment label. */
  name: string;
  /** Label stored with every row; unique across sources. */
  environment: string;
  /** https origin, no path, no trailing slash. */
  baseUrl: string;
  email?: string;
  password?: string;
  apiKey?: string;
  apiKeyScheme: ApiKeyScheme;
  /** Dates sent as X-Service-Version, and/or 'unpinned'. */
  chargeCodeVersions: string[];
  carriers: string[];
  lists: ListKey[];
  schedule: string;
  timezone: string;
  /** Extra CA certificates (PEM text) trusted for this source's origin. */
  caPem?: string;
  caFile?: string;
  maxRemovedFraction: number;
  /**
   * Target jobs of this source running at once across all workers, so one account cannot take
   * every slot; no limit when undefined.
   */
  maxConcurrentJobs?: number;
  /**
   * The most one read of a user's fact table for the impact of a sync may take, in seconds
   * (REFSYNC_IMPACT_TIMEOUT_S); absent: the default of src/sync/impact.ts.
   */
  impactTimeoutS?: number;
  alertOn: AlertKind[];
  /** Lists whose events alert; all when absent. */
  alertLists?: ListKey[];
  webhook?: WebhookConfig;
  listOverrides: Partial<Record<ListKey, ListOverride>>;
  /** How a change of a list's columns is taken (REFSYNC_SCHEMA_CHANGES; per list in REFSYNC_CONFIG). */
  schemaChanges: SchemaChanges;
  /** The user's columns that use this source's codes (REFSYNC_CONFIG `usage`); none when absent. */
  usage?: UsageColumn[];
}

export interface AppConfig {
  databaseUrl?: string;
  /**
   * Where the alert dispatcher LISTENs (it needs a session of its own, which a transaction-mode
   * pooler does not give), or 'off' to poll only. Unset: databaseUrl.
   */
  listenDatabaseUrl?: string;
  redisUrl: string;
  /** Extra CA certificates (PEM) trusted for a rediss:// Redis (REFSYNC_REDIS_CA_FILE). */
  redisCaPem?: string;
  /** Redis behind Sentinel: the group name and the sentinels to ask for its primary (REDIS_SENTINELS). */
  redisSentinel?: { name: string; sentinels: Array<{ host: string; port: number }> };
  /** A Redis Cluster: seed nodes (REDIS_CLUSTER_NODES); REDIS_URL then gives only credentials and TLS. */
  redisCluster?: { nodes: Array<{ host: string; port: number }> };
  httpPort: number;
  httpHost: string;
  /** bull-board basic-auth password; the dashboard is open on the bound host when unset. */
  dashboardPassword?: string;
  /** REFSYNC_DASHBOARD_WRITE: the dashboard may change the queue (never without a password); read-only when absent. */
  dashboardWrite?: boolean;
  /** REFSYNC_HTTP_ALLOWED_HOSTS: host names the status page and dashboard answer to besides localhost and IPs. */
  allowedHosts?: string[];
  logLevel: string;
  concurrency: number;
  /**
   * REFSYNC_DB_MAX_CONNECTIONS: the most Postgres connections the process holds at once, LISTEN
   * included; unset, each kind of process takes its default (src/db/connection-budget.ts).
   */
  dbMaxConnections?: number;
  /**
   * REFSYNC_MEMORY_BUDGET_MB: the worker's memory budget as set; the worker takes the smaller of it
   * and the container's cgroup limit, 1024 MiB when neither is there (src/memory/memory-limit.ts).
   */
  memoryBudgetMb?: number;
  /** Whether per-process metrics carry the `source` label (REFSYNC_METRICS_SOURCE_LABEL). */
  metricsSourceLabel: boolean;
  /** REFSYNC_RETAIN_*_DAYS: what the worker prunes, and `refsync prune`. */
  retention: RetentionConfig;
  sources: SourceConfig[];
  /** REFSYNC_CONFIG `usage`, as written (each source holds the entries that apply to it). */
  usage: UsageSource[];
}

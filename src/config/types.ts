import type { ListKey } from '../catalog/list-keys.ts';
import type { RetentionConfig } from './retention.ts';

export type ApiKeyScheme = 'apikey' | 'bearer' | 'basic';
export type WebhookFormat = 'json' | 'slack';
export const alertKinds = ['added', 'removed', 'modified', 'reappeared', 'schema_changed', 'held', 'failed', 'run_completed'] as const;
export type AlertKind = (typeof alertKinds)[number];

/** Where catalog entries can be overridden per deployment (the real service's base paths are not certain). */
export interface ListOverride {
  basePath?: string;
  path?: string;
}

export interface WebhookConfig {
  url: string;
  secret?: string;
  format: WebhookFormat;
  /** Loopback, private and link-local targets are refused unless allowed (SSRF guard). */
  allowPrivate: boolean;
}

/** One upstream account in one environment: what a scheduler and a sync run are made for. */
export interface SourceConfig {
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
  alertOn: AlertKind[];
  /** Lists whose events alert; all when absent. */
  alertLists?: ListKey[];
  webhook?: WebhookConfig;
  listOverrides: Partial<Record<ListKey, ListOverride>>;
}

export interface AppConfig {
  databaseUrl?: string;
  redisUrl: string;
  httpPort: number;
  httpHost: string;
  /** bull-board basic-auth password; the dashboard is open on the bound host when unset. */
  dashboardPassword?: string;
  logLevel: string;
  concurrency: number;
  /** Whether per-process metrics carry the `source` label (REFSYNC_METRICS_SOURCE_LABEL). */
  metricsSourceLabel: boolean;
  /** REFSYNC_RETAIN_*_DAYS: what the worker prunes, and `refsync prune`. */
  retention: RetentionConfig;
  sources: SourceConfig[];
}

// The one table of every environment variable refsync reads: its meaning and default as the docs
// state them. docs/configuration.md's tables and .env.example are generated from it
// (`node scripts/settings-docs.ts`; test/docs/settings.test.ts holds them equal), the unknown-setting
// warning knows its REFSYNC_* names, and a test loads the configuration with each `unsetEquals` value
// set and unset to hold the documented defaults to the code's. Adding a setting is one entry here.

export type SettingSection = 'storage' | 'upstream' | 'lists' | 'limits' | 'worker' | 'retention' | 'http' | 'alerts' | 'logs' | 'tracing';

export interface Setting {
  name: string;
  section: SettingSection;
  /** Markdown, one or two sentences; .env.example shows it as plain text. */
  meaning: string;
  /** Markdown: what leaving it unset means. */
  default: string;
  /** The value that behaves exactly as leaving it unset: a test loads the configuration both ways. */
  unsetEquals?: string;
  /** A secret (or a URL that may carry one): `NAME_FILE` names a file holding the value instead. */
  file?: true;
  /** .env.example sets it to this, uncommented; otherwise it shows `#NAME=` with `unsetEquals` or `sample`. */
  example?: string;
  /** A value to show commented out in .env.example when the default is no value. */
  sample?: string;
}

export const settingSections: Record<SettingSection, string> = {
  storage: 'Storage',
  upstream: 'The upstream service (one source; several: REFSYNC_CONFIG)',
  lists: 'What to sync',
  limits: 'Deadlines and list limits (per source in REFSYNC_CONFIG too)',
  worker: 'Schedule and worker',
  retention: 'Retention (the worker prunes hourly; `refsync prune` now; 0 keeps that kind forever)',
  http: 'Health, metrics, status page and dashboard',
  alerts: 'Alerts',
  logs: 'Logs',
  tracing: 'Tracing (OpenTelemetry; off unless an OTLP endpoint is set)',
};

const storage: Setting[] = [
  {
    name: 'DATABASE_URL',
    section: 'storage',
    meaning: 'Postgres (`postgres://user:password@host:port/db`)',
    default: 'unset: `sync`, `demo` and `sql` use embedded PGlite in `./.refsync/pgdata`; `worker` requires it',
    file: true,
    example: 'postgres://refsync:change-me@127.0.0.1:5432/refsync',
  },
  {
    name: 'REFSYNC_LISTEN_DATABASE_URL',
    section: 'storage',
    meaning:
      'direct Postgres URL for the `LISTEN` of the alert dispatcher and of `refsync changes --follow` when `DATABASE_URL` is a transaction-mode pooler, or `off` to poll only (see [production.md](production.md#connection-poolers))',
    default: '`DATABASE_URL`',
    file: true,
  },
  {
    name: 'REFSYNC_DB_MAX_CONNECTIONS',
    section: 'storage',
    meaning:
      'the most Postgres connections one refsync process holds at once, its `LISTEN` included (2 to 10000; see [production.md](production.md#the-connection-budget))',
    default: '`REFSYNC_CONCURRENCY` + 1 for `sync` and `demo`, + 2 for `worker`, 2 for any other command',
  },
  {
    name: 'REFSYNC_EMBEDDED_WAIT_SECONDS',
    section: 'storage',
    meaning:
      'without `DATABASE_URL`: how long a command waits for another that has the embedded database open (one process at a time; it says on stderr whom it waits for) before it gives up with exit 1; `0` gives up at once',
    default: 'waits as long as the other command runs',
  },
  {
    name: 'POSTGRES_PASSWORD',
    section: 'storage',
    meaning: 'password of the compose Postgres (docker-compose.yml only; refsync does not read it)',
    default: '—',
    example: 'change-me',
  },
  {
    name: 'REDIS_URL',
    section: 'storage',
    meaning: 'Redis for the queue; its `maxmemory-policy` must be `noeviction`. `refsync status` names the Redis it read',
    default: '`redis://127.0.0.1:6379`',
    unsetEquals: 'redis://127.0.0.1:6379',
    file: true,
    example: 'redis://127.0.0.1:6379',
  },
  {
    name: 'REFSYNC_REDIS_CA_FILE',
    section: 'storage',
    meaning: 'extra CA (PEM) for a `rediss://` `REDIS_URL` (see [production.md](production.md#redis-tls-acl-users-sentinel-cluster))',
    default: '—',
  },
  {
    name: 'REDIS_SENTINELS',
    section: 'storage',
    meaning: 'Redis behind Sentinel: `host:port` of each sentinel, comma-separated',
    default: '—',
    sample: 's1:26379,s2:26379',
  },
  { name: 'REDIS_SENTINEL_NAME', section: 'storage', meaning: 'the Sentinel group name', default: '`mymaster`', sample: 'mymaster' },
  {
    name: 'REDIS_CLUSTER_NODES',
    section: 'storage',
    meaning:
      "a Redis Cluster: some of its nodes (`host:port`, comma-separated); `REDIS_URL` then gives only the user, password and `rediss://`, and the queue's keys go under `{REFSYNC_QUEUE_PREFIX}`",
    default: '—',
    sample: 'redis-1:6379,redis-2:6379,redis-3:6379',
  },
  {
    name: 'REFSYNC_QUEUE_PREFIX',
    section: 'storage',
    meaning: 'Redis key prefix of the queue; workers sharing one Redis for separate deployments need their own',
    default: '`refsync`',
    sample: 'refsync',
  },
];

const upstream: Setting[] = [
  {
    name: 'REFSYNC_BASE_URL',
    section: 'upstream',
    meaning: 'upstream origin, `https://host[:port]`, no path (`http://` is refused)',
    default: 'required by `sync` and `worker`',
    example: 'https://api.vendor.example',
  },
  {
    name: 'REFSYNC_ENVIRONMENT',
    section: 'upstream',
    meaning: 'label stored with every row (`sandbox`, `production`, ...)',
    default: '`production`',
    unsetEquals: 'production',
    example: 'production',
  },
  { name: 'REFSYNC_SOURCE_NAME', section: 'upstream', meaning: 'stable name of the source (its scheduler id)', default: 'the environment label' },
  {
    name: 'REFSYNC_EMAIL',
    section: 'upstream',
    meaning: "the machine user's login, sent to `POST /v2/auth/token/`",
    default: '—',
    example: 'refsync@example.com',
  },
  { name: 'REFSYNC_PASSWORD', section: 'upstream', meaning: "the machine user's password", default: '—', file: true },
  {
    name: 'REFSYNC_API_KEY',
    section: 'upstream',
    meaning: 'an API key, used instead of logging in, or as fallback when a token is refused',
    default: '—',
    file: true,
  },
  {
    name: 'REFSYNC_API_KEY_SCHEME',
    section: 'upstream',
    meaning: 'how the API key is sent: `apikey`, `bearer` or `basic`',
    default: '`apikey`',
    unsetEquals: 'apikey',
  },
  { name: 'REFSYNC_CA_FILE', section: 'upstream', meaning: 'extra CA certificates (PEM) to trust for the upstream', default: '—' },
  {
    name: 'REFSYNC_CONFIG',
    section: 'upstream',
    meaning:
      'a JSON file listing several sources, the variables here then acting as defaults for each (see [production.md](production.md#several-sources)), and/or the `usage` columns of your own data ([data-teams.md](data-teams.md#impact-on-your-data))',
    default: '—',
    sample: '/etc/refsync/sources.json',
  },
];

const lists: Setting[] = [
  {
    name: 'REFSYNC_CHARGE_CODE_VERSIONS',
    section: 'lists',
    meaning: 'charge-code versions to keep, comma-separated: dates (sent as `X-Service-Version`) and `unpinned`',
    default: '`unpinned`',
    unsetEquals: 'unpinned',
    sample: '2024-06-11,unpinned',
  },
  {
    name: 'REFSYNC_CARRIERS',
    section: 'lists',
    meaning: 'carriers for `/quoting/<carrier>/package-types/`',
    default: '`fedex,ups,usps,dhl`',
    unsetEquals: 'fedex,ups,usps,dhl',
  },
  {
    name: 'REFSYNC_LISTS',
    section: 'lists',
    meaning: 'list keys to sync, comma-separated',
    default: 'all',
    unsetEquals: 'all',
    sample: 'accessorials,charge_codes',
  },
  {
    name: 'REFSYNC_MAX_REMOVED_FRACTION',
    section: 'lists',
    meaning: 'a fetch that would retire more than this share of a list (or empty it) is held',
    default: '`0.5`',
    unsetEquals: '0.5',
  },
  {
    name: 'REFSYNC_SCHEMA_CHANGES',
    section: 'lists',
    meaning:
      'how a change of a list\'s columns is taken: `evolve`, `hold-breaking` or `freeze`, or per list as JSON (`{"charge_codes":"freeze","*":"evolve"}`); see [schema-changes.md](schema-changes.md)',
    default: '`evolve`',
    unsetEquals: 'evolve',
  },
  {
    name: 'REFSYNC_IMPACT_TIMEOUT_S',
    section: 'lists',
    meaning:
      "the most one read of a usage fact table (`REFSYNC_CONFIG` `usage`) may take, in seconds, while a sync holds the list's lock; slower is recorded as the snapshot's `impact_error`",
    default: '`5`',
    sample: '5',
  },
];

const limits: Setting[] = [
  {
    name: 'REFSYNC_REQUEST_DEADLINE_S',
    section: 'limits',
    meaning: 'the most one upstream request may take, first byte sent to last byte read, in seconds ([reliability.md](reliability.md))',
    default: '`600`',
    unsetEquals: '600',
  },
  {
    name: 'REFSYNC_TARGET_DEADLINE_S',
    section: 'limits',
    meaning: 'the most one list variant (target) may take, all its pages and its write, in seconds',
    default: '`3600`',
    unsetEquals: '3600',
  },
  {
    name: 'REFSYNC_MAX_ENTRY_BYTES',
    section: 'limits',
    meaning: 'bytes one entry of a list may take as served',
    default: '`33554432` (32 MiB)',
    unsetEquals: '33554432',
  },
  {
    name: 'REFSYNC_MAX_LIST_ENTRIES',
    section: 'limits',
    meaning: 'entries one list variant may have, all pages together',
    default: '`10000000`',
    unsetEquals: '10000000',
  },
  {
    name: 'REFSYNC_MAX_LIST_BYTES',
    section: 'limits',
    meaning: "bytes of one list variant's answers, all pages together",
    default: '`4294967296` (4 GiB)',
    unsetEquals: '4294967296',
  },
];

const worker: Setting[] = [
  {
    name: 'REFSYNC_SCHEDULE',
    section: 'worker',
    meaning: 'cron expression of the scheduled sync (5 fields, or 6 with seconds first)',
    default: '`0 * * * *` (hourly)',
    unsetEquals: '0 * * * *',
    example: '0 * * * *',
  },
  { name: 'REFSYNC_TIMEZONE', section: 'worker', meaning: "the schedule's time zone (IANA)", default: '`UTC`', unsetEquals: 'UTC', example: 'UTC' },
  {
    name: 'REFSYNC_CONCURRENCY',
    section: 'worker',
    meaning: 'lists synced at once (CLI) / jobs per worker, and lists a worker syncs at once, in its target jobs and run jobs together',
    default: '`4`',
    unsetEquals: '4',
  },
  {
    name: 'REFSYNC_SOURCE_MAX_JOBS',
    section: 'worker',
    meaning:
      'target jobs of one source running at once across all workers (`maxConcurrentJobs` per source in `REFSYNC_CONFIG`), so one account cannot take every slot',
    default: '`2` with several sources; none for one',
  },
  {
    name: 'REFSYNC_MEMORY_BUDGET_MB',
    section: 'worker',
    meaning:
      "the worker's memory budget in MiB, shared by its large lists ([production.md](production.md#the-workers-memory-budget)); the smaller of this and the container's cgroup limit when both are set. `worker`, `sync` and `demo` also give V8 an old space of half of it ([production.md](production.md#memory))",
    default: 'the cgroup limit (`memory.max`, v1 `memory.limit_in_bytes`), else `1024`',
  },
  {
    name: 'REFSYNC_SHUTDOWN_TIMEOUT_MS',
    section: 'worker',
    meaning: 'how long running jobs may finish after SIGTERM before they are aborted and retried later',
    default: '`30000`',
    sample: '30000',
  },
  {
    name: 'REFSYNC_SCHEMA_CHECK_INTERVAL_MS',
    section: 'worker',
    meaning: 'how often a running worker looks for a migration newer than it, 100 to 60000 (it then stops; [production.md](production.md#upgrading))',
    default: '`60000`',
    sample: '60000',
  },
];

const retention: Setting[] = [
  {
    name: 'REFSYNC_RETAIN_SNAPSHOTS_DAYS',
    section: 'retention',
    meaning: 'unchanged snapshots (a fetch that found the list as it was) older than this are deleted; each list keeps its last',
    default: '`30`',
    unsetEquals: '30',
  },
  {
    name: 'REFSYNC_RETAIN_ALERTS_DAYS',
    section: 'retention',
    meaning: 'delivered (or skipped) alerts older than this are deleted; dead and disabled ones stay for a human',
    default: '`90`',
    unsetEquals: '90',
  },
  {
    name: 'REFSYNC_RETAIN_RUNS_DAYS',
    section: 'retention',
    meaning: 'finished runs older than this that no snapshot or alert names are deleted',
    default: '`90`',
    unsetEquals: '90',
  },
];

const http: Setting[] = [
  {
    name: 'REFSYNC_HTTP_PORT',
    section: 'http',
    meaning: "the worker's port of `/healthz`, `/readyz`, `/metrics`, the status page and `/admin/queues`",
    default: '`9464`',
    unsetEquals: '9464',
    example: '9464',
  },
  { name: 'REFSYNC_HTTP_HOST', section: 'http', meaning: "address the worker's HTTP binds to", default: '`127.0.0.1`', unsetEquals: '127.0.0.1' },
  {
    name: 'REFSYNC_DASHBOARD_PASSWORD',
    section: 'http',
    meaning: 'basic-auth password (user `admin`) of the queue dashboard at `/admin/queues`',
    default: 'open on the bound address',
    file: true,
  },
  {
    name: 'REFSYNC_DASHBOARD_WRITE',
    section: 'http',
    meaning: '`true`: the dashboard may pause, add, retry and remove jobs (needs `REFSYNC_DASHBOARD_PASSWORD`)',
    default: '`false`: read-only',
    unsetEquals: 'false',
  },
  {
    name: 'REFSYNC_HTTP_ALLOWED_HOSTS',
    section: 'http',
    meaning: 'host names the status page and dashboard answer to besides localhost and IP addresses (others get 421)',
    default: '—',
    sample: 'refsync.internal',
  },
  {
    name: 'REFSYNC_METRICS_SOURCE_LABEL',
    section: 'http',
    meaning: '`false` leaves the `source` label off per-process histograms and counters (many sources; see [operations.md](operations.md#label-cardinality))',
    default: '`true`',
    unsetEquals: 'true',
  },
];

const alerts: Setting[] = [
  {
    name: 'REFSYNC_WEBHOOK_URL',
    section: 'alerts',
    meaning: 'webhook for alerts (Standard Webhooks signature)',
    default: '—',
    sample: 'https://hooks.example.com/refsync',
  },
  { name: 'REFSYNC_WEBHOOK_SECRET', section: 'alerts', meaning: "the webhook's signing secret, `whsec_` followed by base64", default: '—', file: true },
  {
    name: 'REFSYNC_WEBHOOK_FORMAT',
    section: 'alerts',
    meaning: '`json` (Standard Webhooks body) or `slack` (incoming-webhook text)',
    default: '`json`',
    unsetEquals: 'json',
  },
  {
    name: 'REFSYNC_WEBHOOK_ALLOW_PRIVATE',
    section: 'alerts',
    meaning: 'allow a webhook on a loopback or private address (and `http://`)',
    default: '`false`',
    unsetEquals: 'false',
  },
  {
    name: 'REFSYNC_ALERT_ON',
    section: 'alerts',
    meaning:
      'events that alert: `added`, `removed`, `modified`, `reappeared`, `nonconforming`, `schema_changed`, `held`, `failed`, `used_code_changed` ([Impact on your data](impact.md)), and `run_completed` ([querying.md](querying.md#running-the-next-job-run_completed-and-listen-refdata_runs))',
    default: '`added,nonconforming,held,failed`',
    unsetEquals: 'added,nonconforming,held,failed',
  },
  { name: 'REFSYNC_ALERT_LISTS', section: 'alerts', meaning: 'only these lists alert', default: 'all' },
];

const observability: Setting[] = [
  {
    name: 'LOG_LEVEL',
    section: 'logs',
    meaning: 'pino level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`',
    default: '`info`',
    unsetEquals: 'info',
    example: 'info',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    section: 'tracing',
    meaning: 'OTLP collector; tracing is off without it (see [production.md](production.md#tracing))',
    default: '—',
    sample: 'http://otel-collector:4318',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    section: 'tracing',
    meaning: 'the traces endpoint itself (used as given, no `/v1/traces` added), instead of `OTEL_EXPORTER_OTLP_ENDPOINT`',
    default: '—',
  },
  { name: 'OTEL_SDK_DISABLED', section: 'tracing', meaning: '`true` turns tracing off even with an endpoint set', default: '`false`' },
  { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', section: 'tracing', meaning: '`http/protobuf` or `http/json`', default: '`http/protobuf`', sample: 'http/protobuf' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', section: 'tracing', meaning: 'the protocol for traces alone', default: '`OTEL_EXPORTER_OTLP_PROTOCOL`' },
  { name: 'OTEL_EXPORTER_OTLP_HEADERS', section: 'tracing', meaning: 'headers for the collector', default: '—' },
  { name: 'OTEL_SERVICE_NAME', section: 'tracing', meaning: 'service name of the spans', default: '`refsync`', sample: 'refsync' },
  {
    name: 'OTEL_TRACES_SAMPLER',
    section: 'tracing',
    meaning: 'the standard sampler setting',
    default: '`parentbased_always_on`',
    sample: 'parentbased_always_on',
  },
  { name: 'OTEL_TRACES_SAMPLER_ARG', section: 'tracing', meaning: "the sampler's argument (the ratio of `traceidratio` samplers)", default: '—' },
  {
    name: 'OTEL_RESOURCE_ATTRIBUTES',
    section: 'tracing',
    meaning: 'resource attributes of the spans',
    default: '—',
    sample: 'deployment.environment.name=production',
  },
];

export const settings: Setting[] = [...storage, ...upstream, ...lists, ...limits, ...worker, ...retention, ...http, ...alerts, ...observability];

/** Every name a setting may be given under: the setting, and `NAME_FILE` for a secret. */
export function settingNames(list: readonly Setting[] = settings): string[] {
  return list.flatMap((s) => (s.file ? [s.name, `${s.name}_FILE`] : [s.name]));
}

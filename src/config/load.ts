import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import type { ListKey } from '../catalog/list-keys.ts';
import { cronProblem } from './cron.ts';
import { ConfigError } from './errors.ts';
import { httpAccessFromEnv } from './http-access.ts';
import { checkLogLevel } from '../util/log-level.ts';
import { retentionFromEnv } from './retention.ts';
import { dbMaxConnectionsFromEnv } from './db-connections.ts';
import { configFileSchema, listenDatabaseUrlSchema, redisClusterNodesSchema, redisSentinelsSchema, sourceSchema, type ParsedSource } from './schema.ts';
import { schemaChangesFromEnv } from './schema-changes.ts';
import { readSecret } from './secrets.ts';
import { limitEnvNames, limitsFromEnv, limitsOf } from './source-limits.ts';
import { inLoginBody, refuseControlCharacters } from './sendable.ts';
import { checkUsageReached, toUsageSource, usageFor } from './usage.ts';
import type { AlertKind, AppConfig, ListOverride, SourceConfig, UsageSource } from './types.ts';
import { issueSentence } from './zod-issue.ts';
import { badSecretRefusal, plainHttpRefusal } from './webhook-refusals.ts';
import { certificateProblem } from '../util/pem-list.ts';
import { DEFAULT_MEMORY_BUDGET_MB, MEMORY_BUDGET_MB_RANGE } from '../memory/memory-limit.ts';

type Env = Record<string, string | undefined>;

/** The environment variable behind each source field, to name it in errors. */
const envNames: Record<string, string> = {
  name: 'REFSYNC_SOURCE_NAME',
  environment: 'REFSYNC_ENVIRONMENT',
  baseUrl: 'REFSYNC_BASE_URL',
  email: 'REFSYNC_EMAIL',
  password: 'REFSYNC_PASSWORD',
  apiKey: 'REFSYNC_API_KEY',
  apiKeyScheme: 'REFSYNC_API_KEY_SCHEME',
  chargeCodeVersions: 'REFSYNC_CHARGE_CODE_VERSIONS',
  carriers: 'REFSYNC_CARRIERS',
  lists: 'REFSYNC_LISTS',
  schedule: 'REFSYNC_SCHEDULE',
  timezone: 'REFSYNC_TIMEZONE',
  caFile: 'REFSYNC_CA_FILE',
  maxRemovedFraction: 'REFSYNC_MAX_REMOVED_FRACTION',
  maxConcurrentJobs: 'REFSYNC_SOURCE_MAX_JOBS',
  impactTimeoutS: 'REFSYNC_IMPACT_TIMEOUT_S',
  alertOn: 'REFSYNC_ALERT_ON',
  alertLists: 'REFSYNC_ALERT_LISTS',
  webhookUrl: 'REFSYNC_WEBHOOK_URL',
  webhookSecret: 'REFSYNC_WEBHOOK_SECRET',
  webhookFormat: 'REFSYNC_WEBHOOK_FORMAT',
  webhookAllowPrivate: 'REFSYNC_WEBHOOK_ALLOW_PRIVATE',
  listOverrides: 'REFSYNC_CONFIG catalog',
  ...limitEnvNames,
  schemaChanges: 'REFSYNC_SCHEMA_CHANGES',
};

const defaults = {
  environment: 'production',
  apiKeyScheme: 'apikey',
  chargeCodeVersions: 'unpinned',
  carriers: 'fedex,ups,usps,dhl',
  schedule: '0 * * * *',
  timezone: 'UTC',
  maxRemovedFraction: '0.5',
  alertOn: 'added,nonconforming,held,failed',
  webhookFormat: 'json',
};

/** Target jobs one source runs at once when several sources share the workers and none is set. */
export const DEFAULT_SOURCE_MAX_JOBS = 2;

const nonEmpty = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);

function bool(name: string, value: string | undefined): boolean {
  if (value === undefined || value === '') return false;
  if (/^(1|true|yes)$/i.test(value)) return true;
  if (/^(0|false|no)$/i.test(value)) return false;
  throw new ConfigError(`${name}: expected true or false, got '${value}'`);
}

function integer(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name}: expected a whole number from ${min} to ${max}, got '${value}'`);
  }
  return n;
}

/** Source settings the environment gives, used alone or as defaults under REFSYNC_CONFIG sources. */
function sourceFromEnv(env: Env): Record<string, unknown> {
  const environment = nonEmpty(env.REFSYNC_ENVIRONMENT) ?? defaults.environment;
  return {
    name: nonEmpty(env.REFSYNC_SOURCE_NAME) ?? environment,
    environment,
    baseUrl: nonEmpty(env.REFSYNC_BASE_URL),
    email: nonEmpty(env.REFSYNC_EMAIL),
    password: readSecret('REFSYNC_PASSWORD', env.REFSYNC_PASSWORD, env.REFSYNC_PASSWORD_FILE, 'REFSYNC_PASSWORD_FILE', inLoginBody),
    apiKey: readSecret('REFSYNC_API_KEY', env.REFSYNC_API_KEY, env.REFSYNC_API_KEY_FILE),
    apiKeyScheme: nonEmpty(env.REFSYNC_API_KEY_SCHEME)?.toLowerCase() ?? defaults.apiKeyScheme,
    chargeCodeVersions: nonEmpty(env.REFSYNC_CHARGE_CODE_VERSIONS) ?? defaults.chargeCodeVersions,
    carriers: nonEmpty(env.REFSYNC_CARRIERS) ?? defaults.carriers,
    lists: nonEmpty(env.REFSYNC_LISTS) ?? 'all',
    schedule: nonEmpty(env.REFSYNC_SCHEDULE) ?? defaults.schedule,
    timezone: nonEmpty(env.REFSYNC_TIMEZONE) ?? defaults.timezone,
    caFile: nonEmpty(env.REFSYNC_CA_FILE),
    maxRemovedFraction: nonEmpty(env.REFSYNC_MAX_REMOVED_FRACTION) ?? defaults.maxRemovedFraction,
    maxConcurrentJobs: nonEmpty(env.REFSYNC_SOURCE_MAX_JOBS),
    impactTimeoutS: nonEmpty(env.REFSYNC_IMPACT_TIMEOUT_S),
    alertOn: env.REFSYNC_ALERT_ON ?? defaults.alertOn,
    alertLists: nonEmpty(env.REFSYNC_ALERT_LISTS),
    webhookUrl: nonEmpty(env.REFSYNC_WEBHOOK_URL),
    webhookSecret: readSecret('REFSYNC_WEBHOOK_SECRET', env.REFSYNC_WEBHOOK_SECRET, env.REFSYNC_WEBHOOK_SECRET_FILE),
    webhookFormat: nonEmpty(env.REFSYNC_WEBHOOK_FORMAT)?.toLowerCase() ?? defaults.webhookFormat,
    webhookAllowPrivate: bool('REFSYNC_WEBHOOK_ALLOW_PRIVATE', env.REFSYNC_WEBHOOK_ALLOW_PRIVATE),
    listOverrides: {},
    ...limitsFromEnv(env),
    schemaChanges: schemaChangesFromEnv(env.REFSYNC_SCHEMA_CHANGES),
  };
}

const secretNames = new Set(['password', 'apiKey', 'webhookSecret']);

/** The value a zod issue points at, quoted, unless it is a secret or not a short scalar. */
function offendingValue(raw: unknown, path: PropertyKey[]): string {
  if (path.some((p) => secretNames.has(String(p)))) return '';
  let value: unknown = raw;
  for (const key of path) {
    // Comma lists are validated after splitting, so an index points into the split string.
    if (typeof value === 'string' && typeof key === 'number') value = value.split(',').map((v) => v.trim())[key];
    else if (value === null || typeof value !== 'object') return '';
    else value = (value as Record<PropertyKey, unknown>)[key];
  }
  return typeof value === 'string' || typeof value === 'number' ? ` '${String(value).slice(0, 80)}'` : '';
}

function firstIssue(error: z.ZodError, describe: (field: string) => string, raw?: unknown): ConfigError {
  const issue = error.issues[0];
  if (!issue) return new ConfigError('invalid configuration');
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const at = [...issue.path.map(String), key];
    return new ConfigError(
      `${describe(at[0]!)}${at
        .slice(1)
        .map((p) => `.${p}`)
        .join('')}: is not a setting refsync knows`,
    );
  }
  const [field, ...rest] = issue.path;
  const where =
    field !== undefined ? describe(String(field)) + rest.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('') : 'configuration';
  if (issue.code === 'invalid_type' && issue.message.includes('undefined')) {
    return new ConfigError(`${where}: is required`);
  }
  const value = raw === undefined ? '' : offendingValue(raw, issue.path);
  return new ConfigError(`${where}:${value ? `${value} —` : ''} ${issueSentence(issue)}`);
}

function readCa(describe: string, caFile: string | undefined): string | undefined {
  if (!caFile) return undefined;
  let pem: string;
  try {
    pem = readFileSync(caFile, 'utf8');
  } catch (err) {
    throw new ConfigError(`${describe}: cannot read '${caFile}' (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigError(`${describe}: '${caFile}' holds no PEM certificate`);
  }
  const problem = certificateProblem(pem);
  if (problem) throw new ConfigError(`${describe}: '${caFile}' holds a certificate that does not parse (${problem})`);
  return pem;
}

function toSourceConfig(parsed: ParsedSource, describe: (field: string) => string): SourceConfig {
  if (!parsed.apiKey && !(parsed.email && parsed.password)) {
    throw new ConfigError(`${describe('email')}: credentials are missing; set an email and password, or an API key`);
  }
  if ((parsed.email && !parsed.password) || (!parsed.email && parsed.password)) {
    throw new ConfigError(`${describe(parsed.email ? 'password' : 'email')}: is required with ${describe(parsed.email ? 'email' : 'password')}`);
  }
  if (parsed.webhookUrl && new URL(parsed.webhookUrl).protocol !== 'https:' && !parsed.webhookAllowPrivate) {
    throw new ConfigError(`${describe('webhookUrl')}: ${plainHttpRefusal(describe('webhookAllowPrivate'))}`);
  }
  const scheduleProblem = cronProblem(parsed.schedule, parsed.timezone);
  if (scheduleProblem) {
    throw new ConfigError(`${describe('schedule')}: '${parsed.schedule}' — ${scheduleProblem} (in time zone ${parsed.timezone})`);
  }
  if (parsed.webhookSecret) {
    const encoded = parsed.webhookSecret.replace(/^whsec_/, '');
    if (!encoded || !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(encoded)) {
      throw new ConfigError(`${describe('webhookSecret')}: ${badSecretRefusal}`);
    }
  }
  const source: SourceConfig = {
    name: parsed.name,
    environment: parsed.environment,
    baseUrl: new URL(parsed.baseUrl).origin,
    apiKeyScheme: parsed.apiKeyScheme,
    chargeCodeVersions: [...new Set(parsed.chargeCodeVersions)],
    carriers: [...new Set(parsed.carriers)],
    lists: [...new Set(parsed.lists)] as ListKey[],
    schedule: parsed.schedule,
    timezone: parsed.timezone,
    maxRemovedFraction: parsed.maxRemovedFraction,
    alertOn: [...new Set(parsed.alertOn)] as AlertKind[],
    listOverrides: parsed.listOverrides as Partial<Record<ListKey, ListOverride>>,
    ...limitsOf(parsed),
    schemaChanges: parsed.schemaChanges,
  };
  if (parsed.maxConcurrentJobs !== undefined) source.maxConcurrentJobs = parsed.maxConcurrentJobs;
  if (parsed.impactTimeoutS !== undefined) source.impactTimeoutS = parsed.impactTimeoutS;
  if (parsed.email) source.email = parsed.email;
  if (parsed.password) source.password = parsed.password;
  if (parsed.apiKey) source.apiKey = parsed.apiKey;
  if (parsed.caFile) {
    source.caFile = parsed.caFile;
    const pem = readCa(describe('caFile'), parsed.caFile);
    if (pem) source.caPem = pem;
  }
  if (parsed.alertLists) source.alertLists = parsed.alertLists as ListKey[];
  if (parsed.webhookUrl) {
    source.webhook = {
      url: parsed.webhookUrl,
      format: parsed.webhookFormat,
      allowPrivate: parsed.webhookAllowPrivate,
    };
    if (parsed.webhookSecret) source.webhook.secret = parsed.webhookSecret;
  }
  return source;
}

/**
 * JSON.parse's reason without the excerpt of the text it may quote: the excerpt can span lines
 * (cutting the one-line message mid-quote) and a config file can hold secrets.
 */
function jsonErrorReason(err: Error): string {
  return err.message.replace(/, (\.\.\.)?".*" is not valid JSON$/s, '').replace(/\s+/g, ' ');
}

const secretFields = ['password', 'apiKey', 'webhookSecret'] as const;

/** Source fields besides the secrets (checked as they are read) that go into a request as they are. */
const sentFields = ['email', 'baseUrl', 'webhookUrl'] as const;

type ConfigFile = z.output<typeof configFileSchema>;
type Candidate = [Record<string, unknown>, (f: string) => string];

const describeEnv = (f: string) => envNames[f] ?? f;

function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`REFSYNC_CONFIG: cannot read '${path}' (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`REFSYNC_CONFIG: '${path}' is not valid JSON (${jsonErrorReason(err as Error)})`);
  }
  const file = configFileSchema.safeParse(json);
  if (!file.success) throw firstIssue(file.error, (f) => `REFSYNC_CONFIG ${f}`, json);
  return file.data;
}

function sourcesFromFile(file: ConfigFile, envSource: Record<string, unknown>): Candidate[] {
  // A file without sources holds only usage and catalog: the one source is the environment's.
  if (!file.sources) return [[{ ...envSource, listOverrides: { ...file.catalog } }, describeEnv]];
  return file.sources.map((raw, index) => {
    const label = typeof raw.name === 'string' ? raw.name : typeof raw.environment === 'string' ? raw.environment : String(index);
    const describe = (field: string) => `REFSYNC_CONFIG sources[${index}] (${label}).${field}`;
    const merged: Record<string, unknown> = { ...envSource, password: undefined, apiKey: undefined, email: undefined };
    for (const [key, value] of Object.entries(raw)) {
      if (key.endsWith('File') && secretFields.includes(key.slice(0, -4) as (typeof secretFields)[number])) continue;
      merged[key] = value;
    }
    for (const field of secretFields) {
      const value = raw[field];
      const filePath = raw[`${field}File`];
      if (value !== undefined && typeof value !== 'string') throw new ConfigError(`${describe(field)}: must be a string`);
      if (filePath !== undefined && typeof filePath !== 'string') throw new ConfigError(`${describe(`${field}File`)}: must be a string`);
      merged[field] = readSecret(describe(field), value, filePath, describe(`${field}File`), field === 'password' ? inLoginBody : {});
    }
    if (raw.environment !== undefined && raw.name === undefined) merged.name = raw.environment;
    merged.listOverrides = { ...file.catalog, ...(raw.listOverrides as object | undefined) };
    return [merged, describe];
  });
}

/** Certificate checks stay on: a trusted CA is the way to reach a private upstream. */
function refuseDisabledCertificateChecks(env: Env): void {
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
    throw new ConfigError('NODE_TLS_REJECT_UNAUTHORIZED=0 is refused: it would disable certificate checks; trust a CA with REFSYNC_CA_FILE instead');
  }
}

/** Each candidate validated into a source; the sources' names and environments must be unique. */
function parseSources(candidates: Candidate[]): SourceConfig[] {
  const sources = candidates.map(([raw, describe]) => {
    for (const field of sentFields) refuseControlCharacters(describe(field), raw[field]);
    const parsed = sourceSchema.safeParse(raw);
    if (!parsed.success) throw firstIssue(parsed.error, describe, raw);
    return toSourceConfig(parsed.data, describe);
  });

  // A share of the slots means something only beside other sources: alone, a source may use them all.
  if (sources.length > 1) for (const s of sources) s.maxConcurrentJobs ??= DEFAULT_SOURCE_MAX_JOBS;

  for (const key of ['name', 'environment'] as const) {
    const seen = new Set<string>();
    for (const s of sources) {
      if (seen.has(s[key])) throw new ConfigError(`REFSYNC_CONFIG: two sources share the ${key} '${s[key]}'; each must be unique`);
      seen.add(s[key]);
    }
  }
  return sources;
}

/** The file's usage entries, each checked to reach a source, and given to the sources they apply to. */
function attachUsage(sources: SourceConfig[], file: ConfigFile | undefined): UsageSource[] {
  const usage = (file?.usage ?? []).map(toUsageSource);
  checkUsageReached(sources, usage);
  for (const source of sources) {
    const columns = usageFor(source, usage);
    if (columns.length) source.usage = columns;
  }
  return usage;
}

/** The settings that are absent from the config when unset (their users fall back on their own). */
function addOptionalSettings(config: AppConfig, env: Env): void {
  const databaseUrl = readSecret('DATABASE_URL', env.DATABASE_URL, env.DATABASE_URL_FILE);
  if (databaseUrl) config.databaseUrl = databaseUrl;
  if (nonEmpty(env.REFSYNC_MEMORY_BUDGET_MB))
    config.memoryBudgetMb = integer(
      'REFSYNC_MEMORY_BUDGET_MB',
      env.REFSYNC_MEMORY_BUDGET_MB,
      DEFAULT_MEMORY_BUDGET_MB,
      MEMORY_BUDGET_MB_RANGE.min,
      MEMORY_BUDGET_MB_RANGE.max,
    );
  if (env.REFSYNC_REDIS_CA_FILE) {
    if (!config.redisUrl.startsWith('rediss://')) throw new ConfigError('REFSYNC_REDIS_CA_FILE: is set, but REDIS_URL does not start with rediss:// (TLS)');
    const pem = readCa('REFSYNC_REDIS_CA_FILE', env.REFSYNC_REDIS_CA_FILE);
    if (pem) config.redisCaPem = pem;
  }
  if (nonEmpty(env.REDIS_SENTINELS)) {
    const parsed = redisSentinelsSchema.safeParse(env.REDIS_SENTINELS);
    if (!parsed.success) throw new ConfigError(`REDIS_SENTINELS: ${parsed.error.issues[0]?.message ?? 'is not valid'}`);
    config.redisSentinel = { name: nonEmpty(env.REDIS_SENTINEL_NAME) ?? 'mymaster', sentinels: parsed.data };
  }
  if (nonEmpty(env.REDIS_CLUSTER_NODES)) {
    if (config.redisSentinel)
      throw new ConfigError('REDIS_CLUSTER_NODES: is set together with REDIS_SENTINELS; a Redis is either a cluster or behind Sentinel, set one');
    const parsed = redisClusterNodesSchema.safeParse(env.REDIS_CLUSTER_NODES);
    if (!parsed.success) throw new ConfigError(`REDIS_CLUSTER_NODES: ${parsed.error.issues[0]?.message ?? 'is not valid'}`);
    config.redisCluster = { nodes: parsed.data };
  }
  const listenUrl = readSecret('REFSYNC_LISTEN_DATABASE_URL', env.REFSYNC_LISTEN_DATABASE_URL, env.REFSYNC_LISTEN_DATABASE_URL_FILE);
  if (listenUrl) {
    const parsed = listenDatabaseUrlSchema.safeParse(listenUrl);
    if (!parsed.success) throw new ConfigError(`REFSYNC_LISTEN_DATABASE_URL: ${parsed.error.issues.at(-1)?.message ?? 'is not valid'}`);
    config.listenDatabaseUrl = parsed.data;
  }
  const dbMaxConnections = dbMaxConnectionsFromEnv(env);
  if (dbMaxConnections !== undefined) config.dbMaxConnections = dbMaxConnections;
  const dashboardPassword = readSecret('REFSYNC_DASHBOARD_PASSWORD', env.REFSYNC_DASHBOARD_PASSWORD, env.REFSYNC_DASHBOARD_PASSWORD_FILE);
  if (dashboardPassword) config.dashboardPassword = dashboardPassword;
}

/**
 * The whole configuration, validated once: the environment (and .env, loaded by the CLI) defines one
 * source, or REFSYNC_CONFIG a list of them. Every error names the setting; secrets are never echoed.
 */
export function loadConfig(env: Env = process.env): AppConfig {
  refuseDisabledCertificateChecks(env);
  const envSource = sourceFromEnv(env);
  const file = env.REFSYNC_CONFIG ? readConfigFile(env.REFSYNC_CONFIG) : undefined;
  const sources = parseSources(file ? sourcesFromFile(file, envSource) : [[envSource, describeEnv]]);
  const usage = attachUsage(sources, file);
  const config: AppConfig = {
    redisUrl: readSecret('REDIS_URL', env.REDIS_URL, env.REDIS_URL_FILE) ?? 'redis://127.0.0.1:6379',
    httpPort: integer('REFSYNC_HTTP_PORT', env.REFSYNC_HTTP_PORT, 9464, 0, 65535),
    httpHost: nonEmpty(env.REFSYNC_HTTP_HOST) ?? '127.0.0.1',
    logLevel: checkLogLevel(nonEmpty(env.LOG_LEVEL) ?? 'info'),
    concurrency: integer('REFSYNC_CONCURRENCY', env.REFSYNC_CONCURRENCY, 4, 1, 256),
    retention: retentionFromEnv(env),
    metricsSourceLabel:
      env.REFSYNC_METRICS_SOURCE_LABEL === undefined || env.REFSYNC_METRICS_SOURCE_LABEL === ''
        ? true
        : bool('REFSYNC_METRICS_SOURCE_LABEL', env.REFSYNC_METRICS_SOURCE_LABEL),
    sources,
    usage,
  };
  addOptionalSettings(config, env);
  Object.assign(config, httpAccessFromEnv(env, config.dashboardPassword));
  return config;
}

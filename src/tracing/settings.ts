// Which of the standard OTEL_* variables refsync reads itself (the OTLP exporters read the endpoint,
// headers, timeout and compression on their own), checked up front so a typo is a one-line
// configuration error rather than traces that silently never arrive.
import { ConfigError } from '../config/errors.ts';

type Env = Record<string, string | undefined>;

export type TraceProtocol = 'http/protobuf' | 'http/json';

export type SamplerSetting =
  | { kind: 'always_on' | 'always_off' | 'parentbased_always_on' | 'parentbased_always_off' }
  | { kind: 'traceidratio' | 'parentbased_traceidratio'; ratio: number };

export interface BatchSettings {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  exportTimeoutMillis: number;
}

export interface TracingSettings {
  serviceName: string;
  protocol: TraceProtocol;
  sampler: SamplerSetting;
  batch: BatchSettings;
}

function set(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? v : undefined;
}

/** Tracing is on only when an OTLP endpoint is set (and the SDK is not disabled by OTEL_SDK_DISABLED). */
export function tracingEnabled(env: Env = process.env): boolean {
  if (set(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return false;
  return set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) !== undefined || set(env.OTEL_EXPORTER_OTLP_ENDPOINT) !== undefined;
}

function protocol(env: Env): TraceProtocol {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = set(env[name]) ?? 'http/protobuf';
  if (value === 'http/protobuf' || value === 'http/json') return value;
  throw new ConfigError(`${name}: '${value}' is not supported; use http/protobuf (the default) or http/json`);
}

const samplers = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

function sampler(env: Env): SamplerSetting {
  const kind = set(env.OTEL_TRACES_SAMPLER) ?? 'parentbased_always_on';
  if (!(samplers as readonly string[]).includes(kind)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER: '${kind}' is not one of ${samplers.join(', ')}`);
  }
  if (kind !== 'traceidratio' && kind !== 'parentbased_traceidratio')
    return { kind: kind as Exclude<SamplerSetting['kind'], 'traceidratio' | 'parentbased_traceidratio'> };
  const arg = set(env.OTEL_TRACES_SAMPLER_ARG) ?? '1';
  const ratio = Number(arg);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG: expected a ratio from 0 to 1, got '${arg}'`);
  return { kind, ratio };
}

function positive(env: Env, name: string, fallback: number): number {
  const value = set(env[name]);
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${name}: expected a whole number above 0, got '${value}'`);
  return n;
}

/**
 * The batch span processor's bounds (OTEL_BSP_*, the SDK's defaults): spans wait in a bounded queue
 * and are dropped when it is full, and an export that hangs is given up after its timeout, so a
 * collector that is down or stuck costs memory up to the queue and never a sync's time.
 */
function batch(env: Env): BatchSettings {
  const maxQueueSize = positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048);
  return {
    maxQueueSize,
    maxExportBatchSize: Math.min(positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512), maxQueueSize),
    scheduledDelayMillis: positive(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000),
    exportTimeoutMillis: positive(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000),
  };
}

/** The settings of an enabled tracer, read once; a bad value is a ConfigError naming its variable. */
export function tracingSettings(env: Env = process.env): TracingSettings {
  return { serviceName: set(env.OTEL_SERVICE_NAME) ?? 'refsync', protocol: protocol(env), sampler: sampler(env), batch: batch(env) };
}

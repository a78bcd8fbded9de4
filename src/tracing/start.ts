// Tracing is off unless an OTLP endpoint is set; then the SDK is loaded (dynamically: with tracing
// off not one of its modules is imported) and configured by the standard OTEL_* variables.
import type { Logger } from '../util/logger.ts';
import { tracingEnabled, tracingSettings } from './settings.ts';

export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is still queued (waiting at most flushTimeoutMs, default 5 s) and stops tracing. */
  shutdown(flushTimeoutMs?: number): Promise<void>;
}

const off: Tracing = { enabled: false, shutdown: async () => undefined };

/** Starts tracing for this process when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set; a bad OTEL_* value is a ConfigError. */
export async function startTracing(logger: Logger, env: Record<string, string | undefined> = process.env): Promise<Tracing> {
  if (!tracingEnabled(env)) return off;
  const settings = tracingSettings(env);
  const { startSdk } = await import('./sdk.ts');
  return startSdk(settings, logger, env);
}

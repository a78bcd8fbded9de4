// `refsync worker`: runs the BullMQ worker and its schedules, and serves health, metrics and the
// queue dashboard, until SIGTERM or SIGINT. The first signal stops taking jobs and lets running
// ones finish (REFSYNC_SHUTDOWN_TIMEOUT_MS, default 30 s, then they are aborted and retried later);
// a second signal, or a shutdown that overruns, exits at once. When a newer refsync migrates the
// database the worker stops itself the same way and exits 2 (docs/production.md, "Upgrading").
// With an OTLP endpoint set, the spans of its jobs are exported (src/tracing).
import { loadConfig } from '../../config/load.ts';
import { ConfigError } from '../../config/errors.ts';
import { DEFAULT_SCHEMA_CHECK_INTERVAL_MS } from '../../queue/worker/schema-watch.ts';
import { startWorkerService } from '../../queue/worker/service.ts';
import { startTracing } from '../../tracing/start.ts';
import { createLogger } from '../../util/logger.ts';
import { parseCommandArgs } from '../args.ts';
import { nextStopSignal } from '../stop-signals.ts';

/** A whole number of milliseconds from `min` to `max` in the setting `name`, or `fallback` when unset. */
function milliseconds(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name}: expected a whole number of milliseconds from ${min} to ${max}, got '${value}'`);
  }
  return n;
}

export async function run(argv: string[]): Promise<number> {
  parseCommandArgs('worker', argv);
  const config = loadConfig();
  const shutdownTimeoutMs = milliseconds('REFSYNC_SHUTDOWN_TIMEOUT_MS', process.env.REFSYNC_SHUTDOWN_TIMEOUT_MS, 30_000, 0, 3_600_000);
  const schemaCheckIntervalMs = milliseconds(
    'REFSYNC_SCHEMA_CHECK_INTERVAL_MS',
    process.env.REFSYNC_SCHEMA_CHECK_INTERVAL_MS,
    DEFAULT_SCHEMA_CHECK_INTERVAL_MS,
    100,
    DEFAULT_SCHEMA_CHECK_INTERVAL_MS,
  );
  const logger = createLogger({ level: config.logLevel, name: 'refsync' });
  // Before anything opens a connection, so undici's instrumentation sees every upstream request.
  const tracing = await startTracing(logger);

  const service = await startWorkerService(config, { logger, shutdownTimeoutMs, schemaCheckIntervalMs }).catch(async (err: unknown) => {
    await tracing.shutdown();
    throw err;
  });
  const stopSignal = nextStopSignal();
  process.stdout.write(
    `refsync worker: serving http://${service.http.host}:${service.http.port} (status page at /, /healthz /readyz /metrics /admin/queues)\n`,
  );

  const signal = await Promise.race([
    stopSignal,
    // The service has closed itself by then and logged why (schema-watch.ts): a status for the supervisor.
    service.stoppedForNewerSchema.then(() => undefined),
  ]);
  if (!signal) {
    await tracing.shutdown();
    return 2;
  }
  logger.info({ signal }, 'stopping: no new jobs; waiting for running ones');
  const force = (why: string) => {
    logger.error({ why }, 'forced exit');
    process.exit(1);
  };
  process.once('SIGINT', () => force('second signal'));
  process.once('SIGTERM', () => force('second signal'));
  // The worker aborts running jobs at the deadline; this guards against anything else hanging.
  const deadline = setTimeout(() => force('shutdown overran its deadline'), shutdownTimeoutMs + 20_000);
  deadline.unref();
  try {
    await service.close();
  } catch (err) {
    logger.error({ err: (err as Error).message }, 'shutdown finished with an error');
    return 1;
  } finally {
    await tracing.shutdown();
    clearTimeout(deadline);
  }
  logger.info('stopped');
  return 0;
}

// A `refsync worker` for P4 and P6, in a process of its own: configuration from the environment
// (with REFSYNC_CONFIG listing the sources), a Redis key prefix from argv[2]. Prints `ready` once it
// takes jobs, and closes gracefully on SIGTERM. It runs with the default size limits (a million-
// entry bare array, ~100 MB, is within them). BENCH_TUNING (JSON) sets the sync's
// tuning for the reduced runs. BENCH_WORKER_LOG=<file> writes the worker's debug log there (the
// memory budget's admissions among it) with its memory every 250 ms, to see where a peak came from.
import { loadConfig } from '../src/config/load.ts';
import { startWorkerService } from '../src/queue/index.ts';
import type { SyncTuning } from '../src/sync/sync-target.ts';
import { createLogger, silentLogger } from '../src/util/logger.ts';
import { pino } from 'pino';
import { relaunchWithHeapFlags } from '../src/memory/heap-flags.ts';

// The old-space limit `refsync worker` gives itself from its budget (REFSYNC_MEMORY_BUDGET_MB here).
relaunchWithHeapFlags();
const prefix = process.argv[2]!;
const config = loadConfig(process.env);
const logFile = process.env.BENCH_WORKER_LOG;
const logger = logFile ? createLogger({ level: 'debug', destination: pino.destination({ dest: logFile, append: true, sync: true }) }) : silentLogger;
if (logFile) {
  const MiB = 2 ** 20;
  setInterval(() => {
    const m = process.memoryUsage();
    const mib = (n: number) => Math.round(n / MiB);
    logger.debug(
      {
        component: 'bench',
        rss: mib(m.rss),
        heapUsed: mib(m.heapUsed),
        heapTotal: mib(m.heapTotal),
        external: mib(m.external),
        arrayBuffers: mib(m.arrayBuffers),
      },
      'memory',
    );
  }, 250).unref();
}
const service = await startWorkerService(config, {
  logger,
  prefix,
  alerts: false,
  shutdownTimeoutMs: 10_000,
  ...(process.env.BENCH_TUNING ? { tuning: JSON.parse(process.env.BENCH_TUNING) as Partial<SyncTuning> } : {}),
});
process.stdout.write('ready\n');
const stop = () => {
  service.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

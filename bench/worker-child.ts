// A `refsync worker` for P4 and P6, in a process of its own: configuration from the environment
// (with REFSYNC_CONFIG listing the sources), a Redis key prefix from argv[2]. Prints `ready` once it
// takes jobs, and closes gracefully on SIGTERM. BENCH_MAX_RESPONSE_BYTES raises the upstream
// client's body cap (a million-entry bare array is ~100 MB), BENCH_TUNING (JSON) sets the sync's
// tuning for the reduced runs.
import { loadConfig } from '../src/config/load.ts';
import { startWorkerService } from '../src/queue/index.ts';
import type { SyncTuning } from '../src/sync/tuning.ts';
import { silentLogger } from '../src/util/logger.ts';

const prefix = process.argv[2]!;
const config = loadConfig(process.env);
const maxResponseBytes = Number(process.env.BENCH_MAX_RESPONSE_BYTES ?? 0);
const service = await startWorkerService(config, {
  logger: silentLogger,
  prefix,
  alerts: false,
  shutdownTimeoutMs: 10_000,
  ...(maxResponseBytes > 0 ? { clientOptions: { maxResponseBytes } } : {}),
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

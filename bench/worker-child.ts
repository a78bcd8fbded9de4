// A `refsync worker` for P4, in a process of its own: configuration from the environment (with
// REFSYNC_CONFIG listing the sources), a Redis key prefix from argv[2]. Prints `ready` once it takes
// jobs, and closes gracefully on SIGTERM.
import { loadConfig } from '../src/config/load.ts';
import { startWorkerService } from '../src/queue/index.ts';
import { silentLogger } from '../src/util/logger.ts';

const prefix = process.argv[2]!;
const config = loadConfig(process.env);
const service = await startWorkerService(config, { logger: silentLogger, prefix, alerts: false, shutdownTimeoutMs: 10_000 });
process.stdout.write('ready\n');
const stop = () => {
  service.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

// `refsync trigger [--list KEY ...] [--slot ID] [--accept-removals] [--accept-schema] [--json]`: enqueues a manual run of every configured
// source for a running worker, and prints each run's slot and job id.
import { loadConfig } from '../../config/load.ts';
import { isValidSlot } from '../../queue/redis/names.ts';
import { triggerRuns } from '../../queue/trigger.ts';
import { startTracing } from '../../tracing/start.ts';
import { createLogger } from '../../util/logger.ts';
import { parseCommandArgs, UsageError } from '../args.ts';
import { parseListArgs } from '../list-args.ts';
import { jsonText } from '../output/terminal.ts';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('trigger', argv);
  const lists = parseListArgs('trigger', values.list);
  if (values['accept-schema'] && !lists)
    throw new UsageError('trigger: --accept-schema needs --list KEY: it applies the held schema change of the lists named');
  if (values.slot !== undefined && !isValidSlot(values.slot)) {
    throw new UsageError('trigger: --slot may hold only letters, digits, _ . - (at most 100)');
  }
  const config = loadConfig();
  if (lists) {
    for (const source of config.sources) {
      const missing = lists.filter((k) => !source.lists.includes(k));
      if (missing.length === lists.length) {
        throw new UsageError(`trigger: source '${source.name}' syncs none of ${lists.join(', ')} (see REFSYNC_LISTS)`);
      }
    }
  }
  const options: Parameters<typeof triggerRuns>[1] = {};
  if (lists) options.lists = lists;
  if (values.slot) options.slot = values.slot;
  if (values['accept-removals']) options.acceptRemovals = true;
  if (values['accept-schema']) options.acceptSchema = true;
  // With an OTLP endpoint set, the run's trace starts here (refsync.trigger) and is exported before exit.
  const tracing = await startTracing(createLogger({ level: config.logLevel, name: 'refsync' }));
  let runs: Awaited<ReturnType<typeof triggerRuns>>;
  try {
    runs = await triggerRuns(config, options);
  } finally {
    await tracing.shutdown(3_000);
  }
  if (values.json) {
    process.stdout.write(`${jsonText(runs, undefined)}\n`);
    return 0;
  }
  for (const r of runs) {
    process.stdout.write(`${r.added ? 'queued' : 'already queued'}: source ${r.source}, slot ${r.slot} (job ${r.jobId})\n`);
  }
  process.stdout.write("a running 'refsync worker' syncs them; see 'refsync status' for the result\n");
  return 0;
}

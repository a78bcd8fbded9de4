import { loadConfig } from '../../config/load.ts';
import { runSync } from '../../sync/run/run-sync.ts';
import { createUpstreamClient, type UpstreamClient } from '../../upstream/index.ts';
import { createLogger } from '../../util/logger.ts';
import { parseCommandArgs, UsageError } from '../args.ts';
import { parseListArgs } from '../list-args.ts';
import { openCliDatabase } from '../database.ts';
import { syncPool } from '../../db/connection-budget.ts';
import { openAlertDelivery } from './deliver-alerts.ts';
import { progressLine as liveProgress } from '../output/progress.ts';
import { targetLabel } from '../../catalog/catalog.ts';
import { failureLines, isGroupedFailure, progressLine, runJson, summaryLine } from '../output/sync-report.ts';
import { jsonText } from '../output/terminal.ts';
import { warnUnindexedUsage } from '../../impact/usage-index.ts';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('sync', argv);
  const lists = parseListArgs('sync', values.list);
  if (values['accept-schema'] && !lists) throw new UsageError('sync: --accept-schema needs --list KEY: it applies the held schema change of the lists named');
  const config = loadConfig();
  const live = liveProgress(process.stderr, !values.json);
  // Log lines go through the progress line, so one never lands on the line it is drawn on.
  const logger = createLogger({ level: config.logLevel, destination: { write: (line: string) => live.print(process.stderr, line) } });
  const pool = syncPool(config.dbMaxConnections, config.concurrency);
  const db = await openCliDatabase({ databaseUrl: config.databaseUrl, logger, poolSize: pool.poolSize });
  const clients = new Map<string, UpstreamClient>();
  let alerts: ReturnType<typeof openAlertDelivery> | undefined;
  try {
    alerts = openAlertDelivery(db, config, logger);
    const options: Parameters<typeof runSync>[0] = {
      db,
      sources: config.sources,
      clientFor: (source) => {
        let client = clients.get(source.name);
        if (!client) clients.set(source.name, (client = createUpstreamClient(source, logger)));
        return client;
      },
      trigger: 'cli',
      acceptRemovals: values['accept-removals'],
      acceptSchema: values['accept-schema'],
      concurrency: pool.concurrency,
      logger,
      onTarget: (outcome) => {
        live.done(targetLabel(outcome.target, true));
        // A failure's line waits for the run's end, where the lists that failed alike are one line.
        if (!values.json && !isGroupedFailure(outcome)) live.print(process.stdout, `${progressLine(outcome, config.sources.length > 1)}\n`);
        else live.clear();
      },
      onProgress: (progress) => live.update(progress),
    };
    if (lists) options.lists = lists;
    // Beside the sync, not before it: one catalog query, and only when usage columns are configured.
    const usageAdvice = warnUnindexedUsage(db, config.sources, logger);
    const results = await runSync(options);
    await usageAdvice;
    await alerts.deliver();
    if (values.json) process.stdout.write(`${jsonText(runJson(results))}\n`);
    else for (const r of results) process.stdout.write([...failureLines(r, config.sources.length > 1), summaryLine(r)].map((l) => `${l}\n`).join(''));
    const allSynced = results.every((r) => r.outcomes.every((o) => o.status === 'changed' || o.status === 'unchanged'));
    return allSynced ? 0 : 1;
  } finally {
    live.clear();
    await alerts?.close();
    await Promise.all([...clients.values()].map((c) => c.close()));
    await db.close();
  }
}

import type { ListKey } from '../catalog/list-keys.ts';
import { loadConfig } from '../config/load.ts';
import { schemaPolicyFor } from '../config/schema-changes.ts';
import type { AppConfig } from '../config/types.ts';
import { parseCommandArgs } from './args.ts';
import { databaseUrlFromEnv, openCliDatabase } from './database.ts';
import { lastRuns, targetStatus, type TargetStatusRow } from '../read/status-query.ts';
import { formatTime } from '../read/format-time.ts';
import { fitTable, outputWidth } from './table.ts';
import { wrapLines } from './wrap.ts';
import { statusExtras, type StatusExtras } from './status-extras.ts';

/** Each target with the schema policy its source applies to its list (null without the configuration). */
function withSchemaPolicy(targets: TargetStatusRow[], config: AppConfig | undefined): Array<TargetStatusRow & { schema_policy: string | null }> {
  return targets.map((t) => {
    const source = config?.sources.find((s) => s.environment === t.environment);
    return { ...t, schema_policy: source ? schemaPolicyFor(source.schemaChanges, t.list_key as ListKey) : null };
  });
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('status', argv);
  // Data teams may run status with DATABASE_URL alone: the queue part needs the full configuration.
  let config: AppConfig | undefined;
  let configProblem: string | undefined;
  try {
    config = loadConfig();
  } catch (err) {
    configProblem = (err as Error).message;
  }
  const db = await openCliDatabase({ databaseUrl: config?.databaseUrl ?? databaseUrlFromEnv(), readOnly: true });
  try {
    const [targets, runs] = await Promise.all([targetStatus(db), lastRuns(db)]);
    const extras: StatusExtras = await statusExtras(db, config, configProblem);
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ runs, targets: withSchemaPolicy(targets, config), ...extras }, null, 2)}\n`);
      return 0;
    }
    const width = outputWidth();
    const out: string[] = [];
    if (runs.length === 0) out.push('no sync has run yet: try `refsync sync` (or `refsync demo`)');
    for (const r of runs) {
      out.push(
        `${r.source} (${r.environment}): last run ${r.id} by ${r.trigger} ${r.status}, started ${formatTime(r.started_at)}` +
          `${r.finished_at ? `, finished ${formatTime(r.finished_at)}` : ''}, ${r.targets_done}/${r.targets_total} lists done, ${r.targets_failed} not synced` +
          `${r.error ? `\n  ${r.error}` : ''}`,
      );
    }
    if (targets.length) {
      out.push('');
      out.push(
        fitTable(
          ['environment', 'list', 'variant', 'last fetch', 'status', 'entries', 'last success', 'last change', 'error'],
          targets.map((t) => [
            t.environment,
            t.list_key,
            t.variant,
            formatTime(t.last_fetched_at),
            t.last_status,
            t.current_entries,
            formatTime(t.last_success_at),
            formatTime(t.last_change_at),
            (t.last_error ?? '').slice(0, 80),
          ]),
          width,
          3,
        ),
      );
    }
    out.push('', ...extras.lines);
    const text = out.join('\n');
    process.stdout.write(`${width ? wrapLines(text, width) : text}\n`);
    return 0;
  } finally {
    await db.close();
  }
}

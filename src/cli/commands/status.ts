import { isListKey, notAListKey } from '../../catalog/list-keys.ts';
import type { ListKey } from '../../catalog/list-keys.ts';
import { loadConfig } from '../../config/load.ts';
import { schemaPolicyFor } from '../../config/schema-changes.ts';
import type { AppConfig } from '../../config/types.ts';
import { parseCommandArgs, UsageError } from '../args.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';
import { lastRuns, targetStatus, type RunRow, type TargetStatusRow } from '../../read/status-query.ts';
import { outputWidth } from '../output/table.ts';
import { wrapLines } from '../output/wrap.ts';
import { statusExtras, type StatusExtras } from '../status/status-extras.ts';
import { changeFeedStatus, type ChangeFeedStatus } from '../status/status-change-feed.ts';
import { printListDetail } from '../status/status-detail.ts';
import { runLines, targetLines } from '../status/status-lines.ts';
import { jsonText, terminalText } from '../output/terminal.ts';

/** The overview as text: per environment its last run and one line per target, then the queue and alerts. */
function overview(runs: RunRow[], targets: TargetStatusRow[], extras: StatusExtras, feed: ChangeFeedStatus, width: number | undefined): string {
  const now = new Date();
  const out: string[] = [];
  if (runs.length === 0 && targets.length === 0) out.push('no sync has run yet: try `refsync sync` (or `refsync demo`)');
  const environments = [...new Set([...runs.map((r) => r.environment), ...targets.map((t) => t.environment)])].sort();
  for (const environment of environments) {
    const run = runs.find((r) => r.environment === environment);
    out.push(...(run ? runLines(run, width, now) : [`environment ${terminalText(environment)}: no run recorded`]));
    const own = targets.filter((t) => t.environment === environment);
    if (own.length) out.push(...targetLines(own, width, now, run?.error));
    out.push('');
  }
  const stuck = targets.find((t) => t.last_status !== 'ok');
  if (stuck) out.push(`why a list is held or failed, and what resolves it: refsync status --list ${stuck.list_key}`, '');
  out.push(...extras.lines, ...feed.lines);
  // Target lines fit the width already; the few other lines wrap, indented, rather than being cut.
  const text = out.join('\n');
  return `${width ? wrapLines(text, width) : text}\n`;
}

/** Each target with the schema policy its source applies to its list (null without the configuration). */
function withSchemaPolicy(targets: TargetStatusRow[], config: AppConfig | undefined): Array<TargetStatusRow & { schema_policy: string | null }> {
  return targets.map((t) => {
    const source = config?.sources.find((s) => s.environment === t.environment);
    return { ...t, schema_policy: source ? schemaPolicyFor(source.schemaChanges, t.list_key as ListKey) : null };
  });
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('status', argv);
  if (values.list !== undefined && !isListKey(values.list)) throw new UsageError(`status: --list ${notAListKey(values.list)}`);
  if (values.source !== undefined && values.list === undefined) throw new UsageError('status: --source goes with --list KEY');
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
    if (values.list !== undefined) return await printListDetail(db, values.list, values.source ?? null, values.json, outputWidth());
    const [targets, runs] = await Promise.all([targetStatus(db), lastRuns(db)]);
    const extras: StatusExtras = await statusExtras(db, config, configProblem);
    const feed = await changeFeedStatus(db);
    if (values.json) {
      process.stdout.write(`${jsonText({ runs, targets: withSchemaPolicy(targets, config), ...extras, change_feed: feed.change_feed })}\n`);
      return 0;
    }
    process.stdout.write(overview(runs, targets, extras, feed, outputWidth()));
    return 0;
  } finally {
    await db.close();
  }
}

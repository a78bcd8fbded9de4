// `refsync export-dbt [--out FILE]`: the dbt sources.yml of schema refdata. The contract's columns
// and their descriptions need no database; the typed columns of each list view (with data_type)
// come from the recorded schema of DATABASE_URL, or of the embedded database when there is one.
// Without either, the file lists the contract's columns only. Freshness thresholds follow the sync
// schedule (--schedule, else REFSYNC_SCHEDULE); --dbt-version picks the syntax. With a
// configuration, the source's description names each refsync source's schema policy
// (REFSYNC_SCHEMA_CHANGES).
import { existsSync, writeFileSync } from 'node:fs';
import { listKeys, type ListKey } from '../../catalog/list-keys.ts';
import { readTypedColumns, type TypedColumn } from '../../columns/typed-columns.ts';
import { EMBEDDED_DATA_DIR } from '../../db/database.ts';
import { cronProblem } from '../../config/cron.ts';
import { loadConfig } from '../../config/load.ts';
import { dbtSourcesYaml, type DbtSyntax, type SourcePolicy } from '../../dbt/sources.ts';
import { parseCommandArgs, UsageError } from '../args.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';

async function recordedColumns(): Promise<Map<ListKey, TypedColumn[]>> {
  const databaseUrl = databaseUrlFromEnv();
  const typed = new Map<ListKey, TypedColumn[]>();
  if (!databaseUrl && !existsSync(EMBEDDED_DATA_DIR)) return typed;
  const db = await openCliDatabase({ databaseUrl, readOnly: true });
  try {
    for (const key of listKeys) typed.set(key, await readTypedColumns(db, key));
  } finally {
    await db.close();
  }
  return typed;
}

/**
 * The syntax for a dbt version as users name it: 1.8 and 1.9 read the older syntax, 1.10 and later
 * the newer one (a patch version such as 1.9.4 is taken too). Older dbt versions are refused.
 */
function syntaxOf(value: string | undefined): DbtSyntax {
  if (value === undefined) return '1.10';
  const minor = /^1\.(\d+)(?:\.\d+)?$/.exec(value)?.[1];
  if (minor === undefined || Number(minor) < 8) {
    throw new UsageError(`export-dbt: --dbt-version '${value.slice(0, 20)}' is not a dbt version refsync writes for: 1.8, 1.9, or 1.10 and later`);
  }
  return Number(minor) < 10 ? '1.8' : '1.10';
}

/** The schedule the freshness thresholds follow: --schedule, else the worker's REFSYNC_SCHEDULE. */
function scheduleOf(value: string | undefined): { cron: string; timezone: string } {
  const cron = value ?? process.env.REFSYNC_SCHEDULE ?? '0 * * * *';
  const timezone = process.env.REFSYNC_TIMEZONE ?? 'UTC';
  const problem = cronProblem(cron, timezone);
  if (problem) throw new UsageError(`export-dbt: ${value === undefined ? 'REFSYNC_SCHEDULE' : '--schedule'} '${cron}' is not a cron expression: ${problem}`);
  return { cron, timezone };
}

/** The schema policy of each configured source; none when no configuration loads (the export needs none). */
function sourcePolicies(): SourcePolicy[] {
  try {
    return loadConfig().sources.map((s) => ({ name: s.name, schemaChanges: s.schemaChanges }));
  } catch {
    return [];
  }
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('export-dbt', argv);
  const syntax = syntaxOf(values['dbt-version']);
  const schedule = scheduleOf(values.schedule);
  const text = dbtSourcesYaml({ typed: await recordedColumns(), syntax, schedule, policies: sourcePolicies() });
  if (!values.out) {
    process.stdout.write(text);
    return 0;
  }
  writeFileSync(values.out, text);
  process.stdout.write(`wrote ${values.out}\n`);
  return 0;
}

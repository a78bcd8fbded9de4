// `refsync impact orphans|pin`: what the reference data means for the user's own facts, read from
// the usage columns of REFSYNC_CONFIG (the same configuration `refsync sync` reads).
import { loadConfig } from '../../config/load.ts';
import type { AppConfig, SourceConfig } from '../../config/types.ts';
import { ConfigError } from '../../config/errors.ts';
import { chargeCodeVersionCounts, orphans } from '../../db/functions.ts';
import { pinWhatIf, type PinChange } from '../../impact/pin.ts';
import { parseCommandArgs, UsageError } from '../args.ts';
import { openCliDatabase } from '../database.ts';
import { parseListArgs } from '../list-args.ts';
import { formatTable } from '../output/table.ts';
import { parseTimeArg } from '../time-arg.ts';
import { jsonText } from '../output/terminal.ts';

const usage = 'impact orphans [--list KEY] [--at ISO-8601] [--json] | impact pin FROM TO [--json]';

interface OrphanRow {
  column: string;
  value: string;
  rows: number;
  environment: string;
  list_key: string;
  variant: string;
}

/**
 * The configuration impact reads. Without REFSYNC_CONFIG there is no usage column to read, so that
 * is the one thing named, not the first source setting the loader misses (after `refsync demo` a
 * newcomer met "REFSYNC_BASE_URL: is required" here).
 */
function impactConfig(): AppConfig {
  if (!process.env.REFSYNC_CONFIG) {
    throw new ConfigError(
      'REFSYNC_CONFIG: refsync impact reads the usage columns named in that file, with the source settings refsync sync uses; it is not set (see docs/data-teams.md, "Impact on your data")',
    );
  }
  return loadConfig();
}

function sourcesWithUsage(config: AppConfig): SourceConfig[] {
  const sources = config.sources.filter((s) => s.usage?.length);
  if (sources.length === 0) {
    throw new ConfigError('REFSYNC_CONFIG usage: no usage column is configured (see docs/data-teams.md, "Impact on your data")');
  }
  return sources;
}

const print = (text: string) => process.stdout.write(`${text}\n`);

async function orphansCommand(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('impact', argv, false, 'impact orphans');
  const lists = parseListArgs('impact orphans', values.list);
  const at = parseTimeArg('impact orphans', '--at', values.at);
  const config = impactConfig();
  const sources = sourcesWithUsage(config);
  const db = await openCliDatabase({ databaseUrl: config.databaseUrl, readOnly: true });
  try {
    const rows: OrphanRow[] = [];
    for (const source of sources) {
      for (const u of source.usage!.filter((c) => !lists || lists.includes(c.list))) {
        const found = await orphans(db, u.column, u.list, u.variant, { environment: source.environment, ...(at ? { at } : {}) });
        for (const o of found) {
          rows.push({ column: u.column, value: o.value, rows: o.rows, environment: source.environment, list_key: u.list, variant: u.variant });
        }
      }
    }
    if (values.json) {
      print(jsonText(rows));
    } else if (rows.length === 0) {
      print(`no orphans: every fact matches a ${at ? `code valid at ${at.toISOString()}` : 'current code'}`);
    } else {
      print(
        formatTable(
          ['column', 'value', 'rows', 'list', 'variant', 'environment'],
          rows.map((r) => [r.column, r.value, r.rows, r.list_key, r.variant || null, r.environment]),
        ),
      );
    }
    return 0;
  } finally {
    await db.close();
  }
}

function printPin(from: string, to: string, changes: PinChange[]): void {
  if (changes.length === 0) {
    print(`charge codes ${from} and ${to} are the same: nothing moves`);
    return;
  }
  print(`what moves if charge codes pinned to ${from} were pinned to ${to} (rows: facts in use with the code)`);
  print(
    formatTable(
      ['code', 'change', 'rows', 'changed fields', `description in ${from}`, `description in ${to}`, 'environment'],
      changes.map((c) => [c.code, c.change, c.rows, c.changed_fields?.join(', ') || null, c.description_from, c.description_to, c.environment]),
    ),
  );
}

async function pinCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('impact', argv, true, 'impact pin');
  if (values.list || values.at) throw new UsageError('impact pin: --list and --at belong to impact orphans');
  if (positionals.length !== 2) throw new UsageError(`impact pin: expected two charge-code versions, FROM and TO (usage: refsync ${usage})`);
  const [from, to] = positionals as [string, string];
  const config = impactConfig();
  const sources = sourcesWithUsage(config).filter((s) => s.usage!.some((u) => u.list === 'charge_codes'));
  if (sources.length === 0) throw new ConfigError('REFSYNC_CONFIG usage: no usage column holds charge codes (list charge_codes)');
  const db = await openCliDatabase({ databaseUrl: config.databaseUrl, readOnly: true });
  try {
    const counts = await chargeCodeVersionCounts(db);
    const changes: PinChange[] = [];
    for (const source of sources) {
      for (const version of [from, to]) {
        if (!counts.some((c) => c.environment === source.environment && c.version === version)) {
          process.stderr.write(
            `refsync: impact pin: environment '${source.environment}' holds no charge codes of version '${version}' (sync it first: REFSYNC_CHARGE_CODE_VERSIONS)\n`,
          );
          return 2;
        }
      }
      changes.push(...(await pinWhatIf(db, source, from, to, new Date())));
    }
    if (values.json) {
      print(jsonText(changes.map((c) => ({ code: c.code, change: c.change, rows: c.rows, changed_fields: c.changed_fields, environment: c.environment }))));
    } else {
      printPin(from, to, changes);
    }
    return 0;
  } finally {
    await db.close();
  }
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'orphans') return orphansCommand(rest);
  if (sub === 'pin') return pinCommand(rest);
  throw new UsageError(sub ? `impact: unknown subcommand '${sub}' (usage: refsync ${usage})` : `impact: a subcommand is required (usage: refsync ${usage})`);
}

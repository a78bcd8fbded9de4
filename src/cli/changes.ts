import { parseCommandArgs, UsageError } from './args.ts';
import { databaseUrlFromEnv, openCliDatabase } from './database.ts';
import { parseListArgs } from './list-args.ts';
import { formatTable, formatTime } from './table.ts';

interface ChangeRow {
  id: number;
  detected_at: Date;
  environment: string;
  list_key: string;
  variant: string;
  change: string;
  entry_key: string;
  code: string | null;
  changed_fields: string[] | null;
  description: string | null;
  before: unknown;
  after: unknown;
}

function parseSince(value: string | undefined): Date | null {
  if (value === undefined) return null;
  const looksIso = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value);
  const date = new Date(value);
  if (!looksIso || Number.isNaN(date.getTime())) {
    throw new UsageError(`changes: --since '${value}' is not an ISO-8601 date or time (e.g. 2026-11-01 or 2026-11-01T12:00:00Z)`);
  }
  return date;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('changes', argv);
  const lists = parseListArgs('changes', values.list) ?? null;
  const since = parseSince(values.since);
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) {
    throw new UsageError(`changes: --limit '${values.limit}' must be a whole number from 1 to 100000`);
  }
  const db = await openCliDatabase({ databaseUrl: databaseUrlFromEnv(), readOnly: true });
  try {
    const { rows } = await db.query<ChangeRow>(
      `select id, detected_at, environment, list_key, variant, change, entry_key, code, changed_fields,
              coalesce(after ->> 'description', before ->> 'description', after ->> 'name', before ->> 'name') as description,
              before, after
       from refdata.entry_changes
       where ($1::text[] is null or list_key = any($1))
         and ($2::timestamptz is null or detected_at >= $2)
         and ($3::text is null or environment = $3)
       order by detected_at desc, id desc
       limit $4`,
      [lists, since, values.environment ?? null, limit],
    );
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ changes: rows }, null, 2)}\n`);
      return 0;
    }
    if (rows.length === 0) {
      process.stdout.write('no changes recorded for that selection\n');
      return 0;
    }
    process.stdout.write(
      `${formatTable(
        ['detected', 'environment', 'list', 'variant', 'change', 'code', 'description', 'fields'],
        rows.map((r) => [
          formatTime(r.detected_at),
          r.environment,
          r.list_key,
          r.variant,
          r.change,
          r.code ?? r.entry_key,
          (r.description ?? '').slice(0, 60),
          r.changed_fields?.join(',') ?? '',
        ]),
      )}\n`,
    );
    return 0;
  } finally {
    await db.close();
  }
}

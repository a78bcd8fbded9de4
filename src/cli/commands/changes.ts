import { parseCommandArgs, UsageError } from '../args.ts';
import { recentChanges } from '../../read/changes-query.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';
import { parseListArgs } from '../list-args.ts';
import { formatTime } from '../../read/format-time.ts';
import { formatTable } from '../output/table.ts';
import { jsonText, shorten } from '../output/terminal.ts';
import { parseTimeArg } from '../time-arg.ts';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('changes', argv);
  const lists = parseListArgs('changes', values.list) ?? null;
  const since = parseTimeArg('changes', '--since', values.since);
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) {
    throw new UsageError(`changes: --limit '${values.limit}' must be a whole number from 1 to 100000`);
  }
  const db = await openCliDatabase({ databaseUrl: databaseUrlFromEnv(), readOnly: true });
  try {
    const rows = await recentChanges(db, { lists, since, environment: values.environment ?? null, limit });
    if (values.json) {
      process.stdout.write(`${jsonText({ changes: rows })}\n`);
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
          r.variant || null,
          r.change,
          r.code ?? r.entry_key,
          r.description === null ? null : shorten(r.description, 60),
          r.changed_fields?.join(',') || null,
        ]),
      )}\n`,
    );
    return 0;
  } finally {
    await db.close();
  }
}
